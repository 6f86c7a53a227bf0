/**
 * One list of error codes for the whole of mq: the TypeScript union, the wire
 * enum (`ErrorCode` in `mq.proto`, checked by a test) and the retriable flag
 * that clients act on all come from here.
 */
export const ERROR_CODES = {
  NONE: { code: 0, retriable: false },
  UNKNOWN: { code: 1, retriable: false },
  // Log and records
  OFFSET_OUT_OF_RANGE: { code: 2, retriable: false },
  CORRUPT_MESSAGE: { code: 3, retriable: true },
  RECORD_TOO_LARGE: { code: 4, retriable: false },
  INVALID_RECORD: { code: 5, retriable: false },
  INVALID_TIMESTAMP: { code: 6, retriable: false },
  UNSUPPORTED_COMPRESSION: { code: 7, retriable: false },
  STORAGE_ERROR: { code: 8, retriable: true },
  LOG_DIR_LOCKED: { code: 9, retriable: false },
  LOG_CLOSED: { code: 10, retriable: true },
  // Topics and partitions
  UNKNOWN_TOPIC_OR_PARTITION: { code: 20, retriable: true },
  TOPIC_ALREADY_EXISTS: { code: 21, retriable: false },
  INVALID_TOPIC: { code: 22, retriable: false },
  INVALID_PARTITIONS: { code: 23, retriable: false },
  INVALID_REPLICATION_FACTOR: { code: 24, retriable: false },
  INVALID_CONFIG: { code: 25, retriable: false },
  POLICY_VIOLATION: { code: 26, retriable: false },
  TOPIC_DELETION_DISABLED: { code: 27, retriable: false },
  /** A replica request names a topic id this broker does not know (a deleted incarnation, or metadata not caught up yet). */
  UNKNOWN_TOPIC_ID: { code: 28, retriable: true },
  /** A replica request's topic id is not the one of the partition this broker hosts under that name (another incarnation). */
  INCONSISTENT_TOPIC_ID: { code: 29, retriable: true },
  // Requests
  INVALID_REQUEST: { code: 40, retriable: false },
  UNSUPPORTED_VERSION: { code: 41, retriable: false },
  INVALID_REQUIRED_ACKS: { code: 42, retriable: false },
  REQUEST_TIMED_OUT: { code: 43, retriable: true },
  INVALID_FETCH_SIZE: { code: 44, retriable: false },
  MESSAGE_TOO_LARGE: { code: 45, retriable: false },
  // Leadership and replication
  NOT_LEADER: { code: 60, retriable: true },
  LEADER_NOT_AVAILABLE: { code: 61, retriable: true },
  NOT_ENOUGH_REPLICAS: { code: 62, retriable: true },
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: { code: 63, retriable: true },
  FENCED_LEADER_EPOCH: { code: 64, retriable: true },
  UNKNOWN_LEADER_EPOCH: { code: 65, retriable: true },
  REPLICA_NOT_AVAILABLE: { code: 66, retriable: true },
  NOT_CONTROLLER: { code: 67, retriable: true },
  BROKER_NOT_AVAILABLE: { code: 68, retriable: true },
  STALE_BROKER_EPOCH: { code: 69, retriable: false },
  INCONSISTENT_PARTITION_EPOCH: { code: 70, retriable: true },
  DUPLICATE_BROKER_REGISTRATION: { code: 71, retriable: false },
  // ---- scaleout: partition reassignment, leader election, decommission
  /** The partition is already being reassigned (cancel it first, or wait for it to finish). */
  REASSIGNMENT_IN_PROGRESS: { code: 72, retriable: false },
  /** A cancel named a partition that is not being reassigned. */
  NO_REASSIGNMENT_IN_PROGRESS: { code: 73, retriable: false },
  /** A replica list names an unknown broker, the same broker twice, or no broker. */
  INVALID_REPLICA_ASSIGNMENT: { code: 74, retriable: false },
  /** The preferred replica is not alive or not in the ISR: no election now. */
  PREFERRED_LEADER_NOT_AVAILABLE: { code: 75, retriable: true },
  /** The preferred replica already leads the partition. */
  ELECTION_NOT_NEEDED: { code: 76, retriable: false },
  /** The broker is being decommissioned (or is): nothing new is placed on it. */
  BROKER_DECOMMISSIONED: { code: 77, retriable: false },
  // Consumer groups
  COORDINATOR_NOT_AVAILABLE: { code: 80, retriable: true },
  NOT_COORDINATOR: { code: 81, retriable: true },
  COORDINATOR_LOAD_IN_PROGRESS: { code: 82, retriable: true },
  ILLEGAL_GENERATION: { code: 83, retriable: false },
  UNKNOWN_MEMBER_ID: { code: 84, retriable: false },
  REBALANCE_IN_PROGRESS: { code: 85, retriable: false },
  INCONSISTENT_GROUP_PROTOCOL: { code: 86, retriable: false },
  INVALID_SESSION_TIMEOUT: { code: 87, retriable: false },
  GROUP_ID_NOT_FOUND: { code: 88, retriable: false },
  NON_EMPTY_GROUP: { code: 89, retriable: false },
  INVALID_GROUP_ID: { code: 90, retriable: false },
  FENCED_INSTANCE_ID: { code: 91, retriable: false },
  MEMBER_ID_REQUIRED: { code: 92, retriable: false },
  INVALID_COMMIT_OFFSET: { code: 93, retriable: false },
  INVALID_ASSIGNMENT: { code: 94, retriable: false },
  GROUP_MAX_SIZE_REACHED: { code: 95, retriable: false },
  OFFSET_METADATA_TOO_LARGE: { code: 96, retriable: false },
  /** This connection created new groups faster than the coordinator's per-connection rate; retry later. */
  GROUP_CREATE_THROTTLED: { code: 97, retriable: true },
  /** The coordinator holds as many groups as it creates (its reserve is for existing groups); retry once groups expire. */
  GROUP_LIMIT_REACHED: { code: 98, retriable: true },
  /** OffsetFetch with require_stable: an offset of the partition was committed in a transaction still open; retry once it ends (KIP-447). */
  UNSTABLE_OFFSET_COMMIT: { code: 99, retriable: true },
  // Idempotent producer
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 100, retriable: false },
  DUPLICATE_SEQUENCE_NUMBER: { code: 101, retriable: false },
  INVALID_PRODUCER_EPOCH: { code: 102, retriable: false },
  UNKNOWN_PRODUCER_ID: { code: 103, retriable: false },
  // Transactions
  /** The request does not fit the transaction's state (a send outside a transaction, a commit without begin, ...). */
  INVALID_TXN_STATE: { code: 104, retriable: false },
  /** A newer instance with the same transactional id took over (InitProducerId bumped the epoch): this one must close. */
  PRODUCER_FENCED: { code: 105, retriable: false },
  /** The previous transaction of this transactional id is still being completed; retry. */
  CONCURRENT_TRANSACTIONS: { code: 106, retriable: true },
  INVALID_TRANSACTION_TIMEOUT: { code: 107, retriable: false },
  /** The producer id does not belong to this transactional id. */
  INVALID_PRODUCER_ID_MAPPING: { code: 108, retriable: false },
  TRANSACTION_COORDINATOR_FENCED: { code: 109, retriable: false },
  // Consensus
  PROPOSAL_DROPPED: { code: 120, retriable: true },
  SNAPSHOT_OUT_OF_DATE: { code: 121, retriable: false },
  LOG_COMPACTED: { code: 122, retriable: false },
  UNKNOWN_NODE: { code: 123, retriable: false },
  // Client side (never sent by a broker)
  CONNECTION_ERROR: { code: 140, retriable: true },
  CONNECTION_CLOSED: { code: 141, retriable: true },
  ABORTED: { code: 142, retriable: false },
  INVALID_ARGUMENT: { code: 143, retriable: false },
  BUFFER_FULL: { code: 144, retriable: true },
  CLOSED: { code: 145, retriable: false },
  // Security
  /** Wrong user name or password, a SASL exchange out of order, or a request before the connection authenticated. */
  SASL_AUTHENTICATION_FAILED: { code: 150, retriable: false },
  UNSUPPORTED_SASL_MECHANISM: { code: 151, retriable: false },
  /** A SASL step this connection cannot take now (it already authenticated, or a failed exchange ended SASL on it). */
  ILLEGAL_SASL_STATE: { code: 152, retriable: false },
  TOPIC_AUTHORIZATION_FAILED: { code: 153, retriable: false },
  GROUP_AUTHORIZATION_FAILED: { code: 154, retriable: false },
  CLUSTER_AUTHORIZATION_FAILED: { code: 155, retriable: false },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { code: 156, retriable: false },
  /** A named user (or other security resource) does not exist. */
  RESOURCE_NOT_FOUND: { code: 157, retriable: false },
  /** A broker or controller did not prove the cluster secret (cluster.secret.file) on an inter-broker or Raft connection. */
  CLUSTER_AUTHENTICATION_FAILED: { code: 160, retriable: false },
  // ---- controller quorum membership
  /** Another voter change is not yet committed (one single-server change at a time): retry once it is. */
  VOTER_CHANGE_IN_PROGRESS: { code: 163, retriable: true },
  /** The node to add is already a voter of the metadata quorum. */
  DUPLICATE_VOTER: { code: 164, retriable: false },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

const BY_NUMBER = new Map<number, ErrorCode>(
  (Object.keys(ERROR_CODES) as ErrorCode[]).map((name) => [ERROR_CODES[name].code, name]),
);

/** The name for a wire error number; unknown numbers map to `UNKNOWN`. */
export function errorCodeFromNumber(n: number): ErrorCode {
  return BY_NUMBER.get(n) ?? 'UNKNOWN';
}

export function errorNumber(code: ErrorCode): number {
  return ERROR_CODES[code].code;
}

export function isRetriable(code: ErrorCode): boolean {
  return ERROR_CODES[code].retriable;
}

export interface MqErrorOptions {
  cause?: unknown;
  retriable?: boolean;
  [extra: string]: unknown;
}

/**
 * The base of every error mq throws on purpose. Recognise errors by `code`
 * (stable across packages and the wire), not by `instanceof`.
 */
export class MqError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  [extra: string]: unknown;

  constructor(code: ErrorCode, message: string, options: MqErrorOptions = {}) {
    const { cause, retriable, ...extra } = options;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'MqError';
    this.code = code;
    this.retriable = retriable ?? ERROR_CODES[code].retriable;
    Object.assign(this, extra);
  }

  toJSON(): Record<string, unknown> {
    return { ...this, name: this.name, code: this.code, message: this.message, retriable: this.retriable };
  }
}

/** True when `err` is an mq error, optionally of the given code. */
export function isMqError(err: unknown, code?: ErrorCode): err is MqError {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  if (typeof c !== 'string' || !(c in ERROR_CODES)) return false;
  return code === undefined || c === code;
}
