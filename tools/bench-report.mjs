// Report writing for tools/peer-bench.mjs: the markdown report, the latency
// plot (an SVG drawn here, no browser), and the top costs of a --cpu-prof
// profile.
import { readFile } from 'node:fs/promises';

export function fmtNum(n, digits = 0) {
  if (n === null || n === undefined || Number.isNaN(n)) return 'n/a';
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return 'n/a';
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

/** Self time per function in a .cpuprofile, top `n`, as [{ name, where, selfMs, share }]. */
export async function topCosts(file, n = 12) {
  const profile = JSON.parse(await readFile(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = (deltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    const cf = node.callFrame;
    // Shares are of busy time: idle and the profiler's own (program) bucket are left out.
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') return;
    total += dt;
    const url = (cf.url || '').replace(/^file:\/\//, '').replace(/^.*\/(packages|node_modules)\//, '$1/');
    const key = `${cf.functionName || '(anonymous)'}\t${url ? `${url}:${cf.lineNumber + 1}` : cf.functionName.startsWith('(') ? '' : '(native)'}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, ms]) => {
      const [name, where] = key.split('\t');
      return { name, where, selfMs: ms, share: total > 0 ? ms / total : 0 };
    });
}

const COLORS = { mq: '#d62728', 'mq-fsync': '#ff9896', nats: '#1f77b4', redis: '#2ca02c', 'redis-fsync': '#98df8a', rabbitmq: '#ff7f0e' };

/**
 * Latency by percentile, HdrHistogram style: x is 1/(1-p) on a log scale
 * (50%, 90%, 99%, 99.9%, 99.99%), y is latency in ms on a log scale.
 * `series` is [{ name, curve: [[percentile, ms], ...] }].
 */
export function latencySvg(title, series) {
  const W = 760;
  const H = 440;
  const m = { l: 70, r: 170, t: 40, b: 55 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const xOf = (p) => Math.log10(1 / (1 - Math.min(p, 99.99) / 100));
  const xMax = xOf(99.99);
  const points = series.flatMap((s) => s.curve.map(([, ms]) => Math.max(ms, 0.001)));
  const yMin = Math.pow(10, Math.floor(Math.log10(Math.min(...points, 0.1))));
  const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(...points, 1))));
  const X = (p) => m.l + (xOf(p) / xMax) * pw;
  const Y = (ms) => m.t + ph - ((Math.log10(Math.max(ms, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * ph;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${m.l}" y="22" font-size="14" font-weight="bold">${escapeXml(title)}</text>`);
  for (const p of [0, 50, 90, 99, 99.9, 99.99]) {
    const x = X(p).toFixed(1);
    out.push(`<line x1="${x}" y1="${m.t}" x2="${x}" y2="${m.t + ph}" stroke="#ddd"/>`);
    out.push(`<text x="${x}" y="${m.t + ph + 18}" text-anchor="middle">${p}%</text>`);
  }
  for (let v = yMin; v <= yMax * 1.0001; v *= 10) {
    const y = Y(v).toFixed(1);
    out.push(`<line x1="${m.l}" y1="${y}" x2="${m.l + pw}" y2="${y}" stroke="#ddd"/>`);
    out.push(`<text x="${m.l - 8}" y="${y + 4}" text-anchor="end">${v >= 1 ? v : v.toPrecision(1)} ms</text>`);
  }
  out.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${m.l + pw / 2}" y="${H - 12}" text-anchor="middle">percentile</text>`);
  series.forEach((s, i) => {
    const color = COLORS[s.name] ?? ['#9467bd', '#8c564b', '#e377c2', '#7f7f7f'][i % 4];
    const pts = s.curve.filter(([p]) => p <= 99.99).map(([p, ms]) => `${X(p).toFixed(1)},${Y(ms).toFixed(1)}`).join(' ');
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/>`);
    const ly = m.t + 14 + i * 20;
    out.push(`<line x1="${m.l + pw + 15}" y1="${ly - 4}" x2="${m.l + pw + 40}" y2="${ly - 4}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${m.l + pw + 46}" y="${ly}">${escapeXml(s.label ?? s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function escapeXml(s) {
  return String(s).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]);
}
