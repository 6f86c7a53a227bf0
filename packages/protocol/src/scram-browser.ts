/**
 * `@mq/protocol/scram` under the `browser` export condition: the shared
 * constants and the client's side of SCRAM (./scram-client.ts, over
 * WebCrypto: the same code the Node build runs). The broker's side
 * (ScramServer, stand-in credentials of unknown users) is Node only and
 * refused here with a clear error.
 */
import { MqError } from './errors.js';

export * from './scram-common.js';
export * from './scram-client.js';

function unavailable(): never {
  throw new MqError('UNSUPPORTED_SASL_MECHANISM', 'the broker side of SCRAM (ScramServer) runs only in Node');
}

export class ScramServer {
  constructor() {
    unavailable();
  }
}

export const unknownUserCredentials = unavailable;
