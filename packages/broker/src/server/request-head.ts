/**
 * Requests node:http refuses before any handler (a head over
 * http.max.header.bytes, a request not received in time, bytes that are not
 * HTTP), on the HTTP API port and the WebSocket upgrade alike: Node's own
 * answer (431, 408 or 400, then the socket destroyed), plus one log line.
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

const ANSWERS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

export function refuseBadHead(err: NodeJS.ErrnoException, socket: Socket, logger: Logger): void {
  const [status, text] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request'];
  if (err.code !== 'ECONNRESET') {
    const why = status === 431 ? 'a request head over http.max.header.bytes' : status === 408 ? 'a request not received in time' : 'a request that is not valid HTTP';
    logger.warn({ remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`, code: err.code, status }, `refused ${why}`);
  }
  // As node:http does by default: answer unless a response is already under way on this socket, then destroy it.
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !inProgress) socket.write(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  socket.destroy();
}
