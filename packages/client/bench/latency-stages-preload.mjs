// Loaded into the broker process by latency-stages.mjs (node --import): times
// each frame from its 'message' event to the next ws send (the response), and
// prints the list on SIGUSR1. A broker build whose produce handler pushes
// append times to globalThis.__appendTimes gets those printed too.
import WebSocket from 'ws';

const rows = [];
let t = 0;
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (...args) {
  if (t) {
    rows.push(performance.now() - t);
    t = 0;
    if (rows.length > 20000) rows.splice(0, 10000);
  }
  return send.apply(this, args);
};
const emit = WebSocket.prototype.emit;
WebSocket.prototype.emit = function (event, ...args) {
  if (event === 'message') t = performance.now();
  return emit.call(this, event, ...args);
};
process.on('SIGUSR1', () => {
  process.stdout.write(`DATA${JSON.stringify({ rows, append: (globalThis.__appendTimes ?? []).slice(-20000) })}END`);
});
