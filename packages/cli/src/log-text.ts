/**
 * The broker's pino log for a person at a terminal: one short line per
 * record (`12:03:04 WARN  message  key=value ...`) instead of a JSON object.
 * `mq broker start` uses it on a TTY (with level warn, so only what needs
 * attention shows after the start-up summary); JSON stays the format when the
 * output is piped or redirected, for log shippers and tests.
 */
import { Writable } from 'node:stream';

export const LOG_FORMATS = ['auto', 'json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every record has, or that say nothing to a person. */
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);

/** Text when `format` says so, or when it is auto and the output is a terminal. */
export function useTextLogs(format: LogFormat, out: { isTTY?: boolean }): boolean {
  return format === 'text' || (format === 'auto' && out.isTTY === true);
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) ? JSON.stringify(v) : v;
  if (v && typeof v === 'object' && 'message' in v && typeof (v as { message: unknown }).message === 'string') return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v);
}

/** One pino JSON line as text; a line that is not JSON passes through as is. */
export function formatLogLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 19) : '--:--:--';
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  const fields = Object.entries(rec)
    .filter(([k, v]) => !HIDDEN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`)
    .join(' ');
  return `${time} ${level} ${String(rec.msg ?? '')}${fields ? `  ${fields}` : ''}`;
}

/** A destination for pino that writes `formatLogLine` of each record to `out`. */
export function textLogStream(out: NodeJS.WritableStream): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _enc, done) {
      pending += chunk.toString();
      let i: number;
      while ((i = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, i);
        pending = pending.slice(i + 1);
        if (line.trim() !== '') out.write(`${formatLogLine(line)}\n`);
      }
      done();
    },
  });
}
