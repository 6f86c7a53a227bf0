/** The fuzzer's options: named defaults and one parser (from CLI flags or an object). */
export const DEFAULT_FRAMES = 20_000;
export const DEFAULT_SECONDS = 60;
export const DEFAULT_CONNECTIONS = 4;
/** Requests in flight per fuzzing connection. */
export const DEFAULT_WINDOW = 8;
/** A mutated frame neither answered nor its connection closed within this is a hang. */
export const DEFAULT_ANSWER_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RSS_MB = 1024;
export const DEFAULT_MAX_FDS = 1024;
export const DEFAULT_MAX_P99_MS = 250;

const FLAGS = {
  seed: 'seed',
  frames: 'frames',
  seconds: 'seconds',
  connections: 'connections',
  window: 'window',
  'answer-timeout-ms': 'answerTimeoutMs',
  'max-rss-mb': 'maxRssMb',
  'max-fds': 'maxFds',
  'max-p99-ms': 'maxP99Ms',
  brokers: 'brokers',
};

export function parseArgv(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--record') {
      out.record = true;
      continue;
    }
    if (a === '--quiet') {
      out.quiet = true;
      continue;
    }
    if (a === '--trace') {
      if (i + 1 >= argv.length) throw new Error('--trace needs a file name');
      out.trace = argv[++i];
      continue;
    }
    if (a === '--broker-config') {
      if (i + 1 >= argv.length || !argv[i + 1].includes('=')) throw new Error('--broker-config needs key=value');
      (out.brokerConfig ??= []).push(argv[++i]);
      continue;
    }
    const key = FLAGS[a.replace(/^--/, '')];
    if (!key || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${a} (options: ${Object.keys(FLAGS).map((f) => `--${f}`).join(' ')} --record --quiet --broker-config key=value --trace FILE)`);
    out[key] = Number(argv[++i]);
  }
  return out;
}

function positiveInt(name, v, dflt) {
  const x = v ?? dflt;
  if (!Number.isSafeInteger(x) || x < 0) throw new Error(`${name} must be a non-negative integer, got ${v}`);
  return x;
}

export function parseFuzzOptions(o = {}) {
  return {
    seed: positiveInt('seed', o.seed, Math.floor(Math.random() * 2 ** 31)),
    frames: positiveInt('frames', o.frames, DEFAULT_FRAMES),
    seconds: positiveInt('seconds', o.seconds, DEFAULT_SECONDS),
    connections: Math.max(1, positiveInt('connections', o.connections, DEFAULT_CONNECTIONS)),
    window: Math.max(1, positiveInt('window', o.window, DEFAULT_WINDOW)),
    answerTimeoutMs: positiveInt('answer-timeout-ms', o.answerTimeoutMs, DEFAULT_ANSWER_TIMEOUT_MS),
    maxRssMb: positiveInt('max-rss-mb', o.maxRssMb, DEFAULT_MAX_RSS_MB),
    maxFds: positiveInt('max-fds', o.maxFds, DEFAULT_MAX_FDS),
    maxP99Ms: positiveInt('max-p99-ms', o.maxP99Ms, DEFAULT_MAX_P99_MS),
    brokers: positiveInt('brokers', o.brokers, 1),
    /** Broker configs (key=value) every broker under test starts with (`mq broker start --config-set`). */
    brokerConfig: [...(o.brokerConfig ?? [])],
    quiet: Boolean(o.quiet),
    /** A file to write, at the end, every steady acknowledgment ([wall ms, latency ms]) and every frame sent ([wall ms, index, bytes, description]). */
    trace: o.trace ?? '',
    log: o.log ?? ((line) => process.stderr.write(`${line}\n`)),
  };
}
