import { formatLogLine, textLogStream, useTextLogs } from './log-text.js';

describe('text logs for a terminal', () => {
  it('auto is text on a TTY and JSON otherwise; text and json force it', () => {
    expect(useTextLogs('auto', { isTTY: true })).toBe(true);
    expect(useTextLogs('auto', {})).toBe(false);
    expect(useTextLogs('json', { isTTY: true })).toBe(false);
    expect(useTextLogs('text', {})).toBe(true);
  });

  it('a pino record becomes one line: time, level, message, then its own fields', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5), pid: 1, hostname: 'h', name: 'mq-broker', broker: 1, topic: 'orders', err: { message: 'disk full' }, msg: 'append failed' });
    expect(formatLogLine(line)).toBe('03:04:05 WARN  append failed  broker=1 topic=orders err="disk full"');
    expect(formatLogLine('not json')).toBe('not json');
  });

  it('the stream splits chunks into records', () => {
    const written: string[] = [];
    const s = textLogStream({ write: (x: string) => written.push(x) } as unknown as NodeJS.WritableStream);
    const rec = (msg: string) => JSON.stringify({ level: 50, time: 0, msg });
    const all = `${rec('one')}\n${rec('two')}\n`;
    const cut = all.length - 7; // a record split across two writes
    s.write(all.slice(0, cut));
    expect(written).toHaveLength(1);
    s.write(all.slice(cut));
    expect(written).toEqual(['00:00:00 ERROR one\n', '00:00:00 ERROR two\n']);
  });
});
