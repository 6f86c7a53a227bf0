// Ceiling helper for tools/peer-bench.mjs: a raw `ws` server in its own
// process that counts the bytes it receives and reports them when asked,
// streams bytes back, or answers each message at once (round-trip floor).
// Prints its port on stdout, then serves until its parent closes stdin.
import { openSync, writeSync } from 'node:fs';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 64 * 1024 * 1024, perMessageDeflate: false });
wss.on('connection', (ws) => {
  let bytes = 0;
  /** Round-trip mode ("echo:<size>[:<file>]"): answer every binary message with <size> bytes, after writing it to <file>. */
  let echo = null;
  let fd = -1;
  ws.on('message', (data, isBinary) => {
    if (isBinary && echo) {
      if (fd >= 0) writeSync(fd, data);
      ws.send(echo);
      return;
    }
    if (!isBinary) {
      // "?" asks for the count so far; "send:<bytes>:<size>" asks the sink to stream that many bytes back.
      const text = data.toString();
      if (text.startsWith('echo:')) {
        const [, size, file] = text.split(':');
        echo = Buffer.alloc(Number(size), 9);
        if (file) fd = openSync(file, 'a');
        ws.send('ready');
        return;
      }
      if (text === '?') ws.send(String(bytes));
      else if (text.startsWith('send:')) {
        const [, total, size] = text.split(':').map(Number);
        const chunk = Buffer.alloc(size, 7);
        let sent = 0;
        const pump = () => {
          while (sent < total) {
            ws.send(chunk);
            sent += size;
            if (ws.bufferedAmount > 8 * 1024 * 1024) return void setTimeout(pump, 1);
          }
          ws.send('done');
        };
        pump();
      }
      return;
    }
    bytes += data.length;
  });
});
wss.on('listening', () => process.stdout.write(`${wss.address().port}\n`));
process.stdin.on('end', () => wss.close(() => process.exit(0)));
process.stdin.resume();
