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
  /** The inter-broker listener's port (absent: registered before it existed, the client port). */
  readonly interBrokerPort?: number;
  /** The Kafka listener's advertised host and port (absent: the broker has none). */
  readonly kafkaHost?: string;
  readonly kafkaPort?: number;
  readonly rack: string;
  /** Random id of the broker process run; a new one means the broker restarted. */
  readonly incarnation: string;
  /** The Raft index of the registration: the broker epoch that fences older runs. */
  readonly brokerEpoch: number;
  /** Not alive as far as the active controller knows: leads nothing, in no ISR it could be dropped from. */
  readonly fenced: boolean;
  /** Fenced by its own controlled shutdown: stays fenced until it registers again. */
  readonly shuttingDown?: boolean;
  /**
   * Whether this run started after a clean shutdown (the data directory's
   * clean-shutdown marker). false: the previous run crashed or lost power, and
   * under flush `os`/`interval` its logs may lack a tail it acknowledged.
   * Absent in registrations from before mq asked (trusted, as then).
   */
  readonly cleanShutdown?: boolean;
  /** The broker's default `log.flush.policy` is `always` (its logs keep what it acknowledged through a power loss). */
  readonly flushAlways?: boolean;

  // ---- scaleout
  /** Decommissioned (mq broker decommission): no replica is placed or moved on it; its own move off it. */
  readonly decommissioned?: boolean;
}

/** A replica's log end as it reported it while its partition had no leader (for unclean recovery). */
export interface ReplicaLogEnd {
  readonly broker: number;
  /** The registration (run) that reported; a later run's log may differ. */
  readonly brokerEpoch: number;
  /** The last leader epoch in the replica's log (-1: none). */
  readonly lastEpoch: number;
  readonly endOffset: number;
}

export interface PartitionRecord {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** -1 when no eligible replica is alive (offline partition). */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  /**
   * Eligible leader replicas (KIP-966): members that left the ISR because they
   * were fenced or restarted (not because they lagged) when the rest of the
   * ISR fell below `min.insync.replicas`, so no acks=all write could commit
   * without them. Candidates of an unclean recovery.
   */
  readonly elr?: readonly number[];
  /**
   * Members that left the ISR by being fenced or restarting while the rest
   * could still commit: after a whole-ISR crash they may still hold the
   * longest log, so their log end is compared, but they are never elected on
   * a timeout alone.
   */
  readonly leftIsr?: readonly number[];
  /** ISR members that restarted after an unclean shutdown (topic not flush `always`) and have not been verified since. */
  readonly unverified?: readonly number[];
  /** Log ends reported by candidates while the partition has no leader; cleared when it gets one. */
  readonly logEnds?: readonly ReplicaLogEnd[];
  /**
   * The leader of epoch `leaderEpoch` was elected by unclean recovery with
   * this log end: a replica that holds more (its candidate report was
   * missing) logs what it truncates when it starts following.
   */
  readonly recovery?: { readonly leaderEpoch: number; readonly lastEpoch: number; readonly endOffset: number; readonly missing: readonly number[] };

  // ---- scaleout: a reassignment in progress (all three set together, absent otherwise)
  /**
   * The replica set the partition moves to (its first is the new preferred
   * leader). While it moves, `replicas` is the original set followed by
   * `adding`: the adding replicas follow the leader outside the ISR (they do
   * not count for acks=all) until the leader lets them in; once every one is
   * in the ISR, `replicas` becomes this set and `removing` is dropped.
   */
  readonly targetReplicas?: readonly number[];
  /** Target replicas not in the original set. */
  readonly adding?: readonly number[];
  /** Original replicas not in the target set. */
  readonly removing?: readonly number[];
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
  /** Leaders chosen by unclean recovery (longest log among the candidates); `missing` candidates were not heard from (logged loudly). */
  readonly recoveryElections: readonly RecoveryElection[];
  /** ---- security: SCRAM credentials or ACLs changed. */
  readonly security?: boolean;
}

export interface RecoveryElection {
  readonly topic: string;
  readonly partition: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  /** The elected replica's log end as it reported it (-1/-1 when it had not reported). */
  readonly lastEpoch: number;
  readonly endOffset: number;
  /** Every report it was chosen from. */
  readonly reports: readonly ReplicaLogEnd[];
  /**
   * Candidates (last ISR, ELR) whose log it was elected without: not heard
   * from, or reported a longer log but were still fenced when the wait ran
   * out. They may have held more.
   */
  readonly missing: readonly number[];
}

/** A controller's Raft listener, as a membership change of the metadata quorum recorded it. */
export interface QuorumAddress {
  readonly id: number;
  readonly host: string;
  readonly port: number;
}
