export { RaftCore, quorum } from './core/raft.js';
export { parseRaftOptions } from './core/options.js';
export {
  DEFAULT_ELECTION_TICK,
  DEFAULT_HEARTBEAT_TICK,
  DEFAULT_MAX_SIZE_PER_MSG,
  DEFAULT_MAX_ENTRY_BYTES,
  DEFAULT_MAX_INFLIGHT_MSGS,
  DEFAULT_MAX_INFLIGHT_BYTES,
  DEFAULT_MAX_UNCOMMITTED_BYTES,
  DEFAULT_SNAPSHOT_CHUNK_BYTES,
} from './core/options.js';
export { encodeConfChange, decodeConfChange, applyToConfState } from './core/conf-change.js';
export { EntryType, MessageType, StateRole, ConfChangeOp, message } from './core/types.js';
export { MemoryStorage } from './storage/memory-storage.js';
export { FileStorage, DEFAULT_PREALLOCATE_BYTES } from './storage/file-storage.js';
export { MemoryNetwork } from './transport/memory-transport.js';
export { encodeEnvelope, decodeEnvelope } from './transport/envelope.js';
export { createWsTransport, parseWsTransportOptions, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_RECONNECT_MS } from './transport/ws-transport.js';
export { createRaftNode, bootstrapStorage } from './node/raft-node.js';
export { parseRaftNodeOptions, DEFAULT_TICK_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './node/options.js';

export type { RaftOptions } from './core/options.js';
export type { Entry, HardState, ConfState, ConfChange, Snapshot, SnapshotMeta, Message, Ready, ReadState, SoftState } from './core/types.js';
export type { RaftStorage } from './storage/types.js';
export type { FileStorageOptions } from './storage/file-storage.js';
export type { WsTransport, WsTransportOptions, WsTransportTls } from './transport/ws-transport.js';
export type { RaftNode, RaftNodeComponents, RaftStatus, ProgressStatus, ProposeResult, RequestOptions } from './node/raft-node.js';
export type { RaftNodeOptions } from './node/options.js';
export type { RaftTransport, StateMachine } from './node/types.js';
