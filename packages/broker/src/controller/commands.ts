/**
 * The commands of the metadata log, JSON-encoded in Raft entries and in
 * ControllerForward requests. `decodeCommand` checks the shape of whatever
 * arrives (a forwarded command comes from the network), so the state
 * machine only ever sees well-formed commands.
 */
import { MqError } from '@mq/protocol/errors';

export interface RegisterBrokerCommand {
  type: 'registerBroker';
  id: number;
  host: string;
  port: number;
  httpPort: number;
  rack: string;
  incarnation: string;
  /** The previous run shut down cleanly (absent: not said, trusted as before). */
  cleanShutdown?: boolean;
  /** The broker's default log.flush.policy is `always`. */
  flushAlways?: boolean;
}

export interface FenceBrokerCommand {
  type: 'fenceBroker';
  id: number;
  /** Only the registration with this epoch is fenced (a newer one is left alone). */
  brokerEpoch: number;
  /** `controlled shutdown` (the broker asked itself) keeps it fenced until its next registration. */
  reason: string;
}

export interface UnfenceBrokerCommand {
  type: 'unfenceBroker';
  id: number;
  brokerEpoch: number;
}

export interface CreateTopicCommand {
  type: 'createTopic';
  name: string;
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

export interface DeleteTopicCommand {
  type: 'deleteTopic';
  name: string;
}

export interface CreatePartitionsCommand {
  type: 'createPartitions';
  name: string;
  count: number;
}

export interface AlterPartitionCommand {
  type: 'alterPartition';
  topic: string;
  partition: number;
  leaderId: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
}

/** Moves leadership to the preferred replica where it is eligible (proposed by the active controller). */
export interface ElectPreferredCommand {
  type: 'electPreferred';
  partitions: { topic: string; partition: number; leaderEpoch: number }[];
}

/**
 * A broker's log ends of partitions it is a recovery candidate of (in the
 * ISR, ELR or last ISR) while they have no leader: the controller elects
 * the longest log in (lastEpoch, endOffset) order.
 */
export interface ReportLogEndsCommand {
  type: 'reportLogEnds';
  brokerId: number;
  brokerEpoch: number;
  partitions: { topic: string; partition: number; lastEpoch: number; endOffset: number }[];
}

/** The active controller's wait for the last ISR members is over: elect the best candidate reported so far. */
export interface ElectRecoveredCommand {
  type: 'electRecovered';
  topic: string;
  partition: number;
  /** Only while the partition is still in this leader epoch (without a leader). */
  leaderEpoch: number;
}

export interface AllocateProducerIdsCommand {
  type: 'allocateProducerIds';
  brokerId: number;
  count: number;
}

export type MetadataCommand =
  | RegisterBrokerCommand
  | FenceBrokerCommand
  | UnfenceBrokerCommand
  | CreateTopicCommand
  | DeleteTopicCommand
  | CreatePartitionsCommand
  | AlterPartitionCommand
  | ElectPreferredCommand
  | ReportLogEndsCommand
  | ElectRecoveredCommand
  | AllocateProducerIdsCommand;

/** What applying a command answered: the caller's result, or a refusal with an error code. */
export type CommandResult = { ok: true; value?: unknown } | { ok: false; code: string; message: string };

export function encodeCommand(c: MetadataCommand): Uint8Array {
  return Buffer.from(JSON.stringify(c), 'utf8');
}

function bad(message: string): MqError {
  return new MqError('INVALID_REQUEST', `bad metadata command: ${message}`);
}

function int(o: Record<string, unknown>, k: string, min = 0): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw bad(`${k} must be an integer >= ${min}`);
  return v;
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw bad(`${k} must be a string`);
  return v;
}

function ints(o: Record<string, unknown>, k: string): number[] {
  const v = o[k];
  if (!Array.isArray(v)) throw bad(`${k} must be an array`);
  return v.map((x, i) => int({ [`${k}[${i}]`]: x }, `${k}[${i}]`));
}

function optBool(o: Record<string, unknown>, k: string): boolean | undefined {
  const v = o[k];
  if (v !== undefined && typeof v !== 'boolean') throw bad(`${k} must be a boolean`);
  return v;
}

function strMap(o: Record<string, unknown>, k: string): Record<string, string> {
  const v = o[k];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${k} must be an object`);
  const out: Record<string, string> = {};
  for (const [kk, vv] of Object.entries(v)) {
    if (typeof vv !== 'string') throw bad(`${k}.${kk} must be a string`);
    out[kk] = vv;
  }
  return out;
}

/** Parses and checks a command; INVALID_REQUEST when it is not one. */
export function decodeCommand(data: Uint8Array): MetadataCommand {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (typeof o !== 'object' || o === null) throw bad('not an object');
  switch (o.type) {
    case 'registerBroker': {
      const cleanShutdown = optBool(o, 'cleanShutdown');
      const flushAlways = optBool(o, 'flushAlways');
      return {
        type: o.type,
        id: int(o, 'id'),
        host: str(o, 'host'),
        port: int(o, 'port'),
        httpPort: int(o, 'httpPort'),
        rack: str(o, 'rack'),
        incarnation: str(o, 'incarnation'),
        ...(cleanShutdown !== undefined ? { cleanShutdown } : {}),
        ...(flushAlways !== undefined ? { flushAlways } : {}),
      };
    }
    case 'fenceBroker':
      return { type: o.type, id: int(o, 'id'), brokerEpoch: int(o, 'brokerEpoch'), reason: str(o, 'reason') };
    case 'unfenceBroker':
      return { type: o.type, id: int(o, 'id'), brokerEpoch: int(o, 'brokerEpoch') };
    case 'createTopic':
      return {
        type: o.type,
        name: str(o, 'name'),
        topicId: str(o, 'topicId'),
        numPartitions: int(o, 'numPartitions', 1),
        replicationFactor: int(o, 'replicationFactor', 1),
        configs: strMap(o, 'configs'),
      };
    case 'deleteTopic':
      return { type: o.type, name: str(o, 'name') };
    case 'createPartitions':
      return { type: o.type, name: str(o, 'name'), count: int(o, 'count', 1) };
    case 'alterPartition':
      return {
        type: o.type,
        topic: str(o, 'topic'),
        partition: int(o, 'partition'),
        leaderId: int(o, 'leaderId'),
        leaderEpoch: int(o, 'leaderEpoch'),
        partitionEpoch: int(o, 'partitionEpoch'),
        isr: ints(o, 'isr'),
      };
    case 'electPreferred': {
      const list = o.partitions;
      if (!Array.isArray(list)) throw bad('partitions must be an array');
      return {
        type: o.type,
        partitions: list.map((p: Record<string, unknown>) => ({ topic: str(p, 'topic'), partition: int(p, 'partition'), leaderEpoch: int(p, 'leaderEpoch') })),
      };
    }
    case 'reportLogEnds': {
      const list = o.partitions;
      if (!Array.isArray(list)) throw bad('partitions must be an array');
      return {
        type: o.type,
        brokerId: int(o, 'brokerId'),
        brokerEpoch: int(o, 'brokerEpoch'),
        partitions: list.map((p: Record<string, unknown>) => {
          if (typeof p !== 'object' || p === null) throw bad('partitions[] must be objects');
          return { topic: str(p, 'topic'), partition: int(p, 'partition'), lastEpoch: int(p, 'lastEpoch', -1), endOffset: int(p, 'endOffset') };
        }),
      };
    }
    case 'electRecovered':
      return { type: o.type, topic: str(o, 'topic'), partition: int(o, 'partition'), leaderEpoch: int(o, 'leaderEpoch') };
    case 'allocateProducerIds':
      return { type: o.type, brokerId: int(o, 'brokerId'), count: int(o, 'count', 1) };
    default:
      throw bad(`unknown type ${JSON.stringify(o.type)}`);
  }
}
