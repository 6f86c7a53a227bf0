import type { ConfChange, ConfState, Entry, Message } from '../core/types.js';

/**
 * Carries Raft messages between nodes. Best effort: it may drop, delay,
 * duplicate or reorder messages (Raft tolerates all of these), but must not
 * block and must bound what it buffers.
 */
export interface RaftTransport {
  send(messages: Message[]): void;
  /** Registers the receiver of incoming messages (one per transport). */
  listen(handler: (m: Message) => void): void;
  close(): Promise<void>;
}

/** What the node drives: the application's replicated state. */
export interface StateMachine {
  /** Applies a committed normal entry; the value returned resolves the proposal's promise. */
  apply(entry: Entry): unknown;
  /** A committed membership change was applied (optional). */
  applyConfChange?(change: ConfChange, confState: ConfState, entry: Entry): void | Promise<void>;
  /** Serialises the state as of the last applied entry (for snapshots). */
  snapshot(): Uint8Array | Promise<Uint8Array>;
  /** Replaces the state with a snapshot's. */
  restore(data: Uint8Array, index: number): void | Promise<void>;
}

