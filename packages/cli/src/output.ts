/** Output for people (aligned tables) and for scripts (JSON). */
export type OutputFormat = 'text' | 'json';

export const FORMATS: readonly OutputFormat[] = ['text', 'json'];

/** An aligned table with a header row; cells are strings. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function list(ns: readonly number[]): string {
  return ns.join(',');
}
