/**
 * `@mq/protocol/scram` under the `browser` export condition: the shared
 * constants and name escaping, and the exchange itself refused with a clear
 * error, because SCRAM here is built on node:crypto (synchronous PBKDF2 and
 * HMAC, which WebCrypto does not offer). A bundle that never authenticates
 * carries none of it; one that asks for `sasl` gets UNSUPPORTED_SASL_MECHANISM
 * instead of a build that breaks on node:crypto.
 */
import { MqError } from './errors.js';

export * from './scram-common.js';

function unavailable(): never {
  throw new MqError('UNSUPPORTED_SASL_MECHANISM', 'SCRAM authentication is not available in browsers yet (it needs node:crypto): connect without sasl, from Node, or through a proxy that authenticates');
}

export class ScramClient {
  constructor() {
    unavailable();
  }
}

export class ScramServer {
  constructor() {
    unavailable();
  }
}

export const scramCredential = unavailable;
export const unknownUserCredentials = unavailable;
export const decodeSaslName = unavailable;
