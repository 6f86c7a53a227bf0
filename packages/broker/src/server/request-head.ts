/** Request heads node:http cannot take (over http.max.header.bytes, or not HTTP), on the HTTP API port and the WebSocket upgrade alike. */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/** A request head that node:http could not parse (too large: 431, else 400): one log line, an HTTP answer, the socket closed. */
export function refuseBadHead(err: NodeJS.ErrnoException, socket: Socket, logger: Logger): void {
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  if (err.code !== 'ECONNRESET') {
    logger.warn({ remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`, code: err.code }, tooLarge ? 'refused a request head over http.max.header.bytes' : 'refused a request that is not valid HTTP');
  }
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(tooLarge ? 'HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
}
