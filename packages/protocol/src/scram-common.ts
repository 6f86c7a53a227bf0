/**
 * What both builds of `@mq/protocol/scram` share (no node:* import): the
 * mechanisms, iteration bounds and SASL name escaping. The client's side of
 * the exchange (./scram-client.ts, WebCrypto) is in both builds; the Node
 * build (./scram.ts) adds the broker's side.
 */
import { MqError } from './errors.js';

export const SCRAM_MECHANISMS = {
  'SCRAM-SHA-256': { hash: 'sha256', keyLength: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', keyLength: 64 },
} as const;

export type ScramMechanism = keyof typeof SCRAM_MECHANISMS;

/** Kafka's minimum and default iteration count (RFC 7677 asks for at least 4096). */
export const SCRAM_MIN_ITERATIONS = 4096;
export const SCRAM_DEFAULT_ITERATIONS = 8192;
export const SCRAM_MAX_ITERATIONS = 16384;
/** The longest SCRAM message either side accepts. */
export const SCRAM_MAX_MESSAGE_BYTES = 1024;

export function isScramMechanism(m: string): m is ScramMechanism {
  return Object.prototype.hasOwnProperty.call(SCRAM_MECHANISMS, m);
}

export function checkIterations(iterations: number): void {
  if (!Number.isSafeInteger(iterations) || iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
    throw new MqError('INVALID_REQUEST', `SCRAM iterations must be between ${SCRAM_MIN_ITERATIONS} and ${SCRAM_MAX_ITERATIONS}, got ${iterations}`);
  }
}

/** saslname (RFC 5802 5.1): ',' and '=' escaped. */
export function encodeSaslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

