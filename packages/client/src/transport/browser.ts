/**
 * The browser's connect function (`@mq/client/transport` under the `browser`
 * export condition; same exports as ./node.ts): the browser's own WebSocket.
 */
import type { ClientSocket, ConnectionOptions } from '../connection.js';
import { connectNativeWebSocket } from './native-websocket.js';

/** The default connect function: a WebSocket to the broker, open when the promise resolves. */
export function connectWebSocket(options: ConnectionOptions, signal?: AbortSignal): Promise<ClientSocket> {
  return connectNativeWebSocket(options, signal);
}
