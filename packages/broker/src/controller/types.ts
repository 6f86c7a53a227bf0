/**
 * The cluster metadata that the controller replicates through Raft: broker
 * registrations, topics with their configs and partition assignments, and
 * producer id blocks. Every broker holds the same copy, built by applying
 * the same committed commands in the same order (metadata-state.ts).
 */

export interface BrokerRegistration {
  readonly id: number;
  readonly host: string;
  readonly port: number;
  readonly httpPort: number;
  readonly rack: string;
  /** Random id of the broker process run; a new one means the broker restarted. */
  readonly incarnation: string;
  /** The Raft index of the registration: the broker epoch that fences older runs. */
  readonly brokerEpoch: number;
  /** Not alive as far as the active controller knows: leads nothing, in no ISR it could be dropped from. */
  readonly fenced: boolean;
  /** Fenced by its own controlled shutdown: stays fenced until it registers again. */
  readonly shuttingDown?: boolean;
}

export interface PartitionRecord {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** -1 when no eligible replica is alive (offline partition). */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
}

export interface TopicRecord {
  readonly name: string;
  readonly topicId: string;
  readonly configs: Readonly<Record<string, string>>;
  readonly partitions: readonly PartitionRecord[];
}

/** What changed in one applied command, for the brokers following the log. */
export interface MetadataDelta {
  readonly index: number;
  readonly brokers: boolean;
  /** Topics whose partitions changed (or were created); deleted ones are in `deletedTopics`. */
  readonly topics: readonly string[];
  readonly deletedTopics: readonly { name: string; topicId: string; partitions: number }[];
  /** Leaders chosen outside the ISR (logged loudly). */
  readonly uncleanElections: readonly { topic: string; partition: number; leader: number }[];
}
