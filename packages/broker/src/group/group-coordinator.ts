/**
 * The group coordinator: Kafka's classic group membership protocol as a
 * deterministic state machine. Time comes from injected clock and timers;
 * state is made durable through an injected offsets log (the partitions of
 * `__consumer_offsets`) and rebuilt from it by `loadPartition`.
 *
 *   Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance
 *     ▲                 ▲        │                                   │ leader's sync
 *     │ last leaves     │        └─ nobody left ─▶ Empty             ▼
 *     └─────────────────┴────────── join / leave / expiry ───────── Stable
 *   Dead: deleted or expired (removed from the coordinator).
 *
 * Requests and responses are the wire messages of @mq/protocol/wire, so the
 * broker's handlers pass them straight through.
 */
import { randomUUID } from 'node:crypto';
import { MqError, errorNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { decodeBatchSync, encodeBatchSync, isControl, isTransactional, iterateBatches, markerKeyType, type RecordInput } from '@mq/protocol/batch';
import { mq } from '@mq/protocol/wire';
import { checkConsumerAssignment } from './assignment-check.js';
import { Group, offsetKey, splitOffsetKey, type Member, type Protocol } from './group.js';
import {
  decodeGroupValue,
  decodeKey,
  decodeOffsetValue,
  encodeGroupValue,
  encodeKey,
  encodeOffsetValue,
  partitionForGroup,
  type GroupValue,
} from './offsets-schema.js';
import { parseGroupCoordinatorOptions, type GroupCoordinatorOptions, type ParsedGroupCoordinatorOptions } from './options.js';
import type { OffsetsLog } from './offsets-log.js';
import { silentLogger, systemClock, systemTimers, type Clock, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import { guardTimers } from '../guard.js';
import {
  clientIdProblem,
  durationProblem,
  firstProblem,
  groupIdProblem,
  instanceIdProblem,
  memberIdProblem,
  shown,
  protocolNameProblem,
} from '../request-limits.js';
import { GROUP_STATES } from './types.js';
import type {
  CommittedOffset,
  DeleteGroupsRequest,
  DeleteGroupsResponse,
  DescribeGroupsRequest,
  DescribeGroupsResponse,
  GroupCoordinatorComponents,
  GroupState,
  GroupSummary,
  HeartbeatRequest,
  HeartbeatResponse,
  JoinGroupRequest,
  JoinGroupResponse,
  LeaveGroupRequest,
  LeaveGroupResponse,
  ListGroupsRequest,
  ListGroupsResponse,
  OffsetCommitRequest,
  OffsetCommitResponse,
  OffsetFetchRequest,
  OffsetFetchResponse,
  RequestContext,
  SyncGroupRequest,
  SyncGroupResponse,
  TopicView,
} from './types.js';

const NONE = 0;

function err(code: ErrorCode, message: string): { errorCode: number; errorMessage: string } {
  return { errorCode: errorNumber(code), errorMessage: message };
}

/** Store failures that only mean the group's `__consumer_offsets` partition is moving (see groupErrorOf). */
const COORDINATOR_MOVED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE']);

function codeOf(e: unknown): ErrorCode {
  return isMqError(e) ? (e as MqError).code : 'COORDINATOR_NOT_AVAILABLE';
}

function toBuffer(b: Uint8Array | null | undefined): Buffer {
  if (!b) return Buffer.alloc(0);
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

type PartitionStatus = 'loading' | 'loaded';

export interface GroupCoordinator {
  readonly options: ParsedGroupCoordinatorOptions;
  /** The `__consumer_offsets` partition that coordinates a group. */
  partitionFor(groupId: string): number;
  /** Loads every partition (when this broker leads them all). */
  startup(): Promise<void>;
  /** Takes over a partition of `__consumer_offsets` (on becoming its leader): rebuilds its groups from the log. */
  loadPartition(partition: number): Promise<void>;
  /** Gives a partition up (on losing its leadership): drops its groups; waiting members get NOT_COORDINATOR. */
  unloadPartition(partition: number): void;
  isCoordinatorFor(groupId: string): boolean;
  /** Whether a partition of `__consumer_offsets` is loaded (its groups are served here). */
  isPartitionLoaded(partition: number): boolean;
  joinGroup(req: JoinGroupRequest, ctx: RequestContext): Promise<JoinGroupResponse>;
  syncGroup(req: SyncGroupRequest, ctx: RequestContext): Promise<SyncGroupResponse>;
  heartbeat(req: HeartbeatRequest): Promise<HeartbeatResponse>;
  leaveGroup(req: LeaveGroupRequest): Promise<LeaveGroupResponse>;
  offsetCommit(req: OffsetCommitRequest, ctx?: RequestContext, txn?: TxnProducer): Promise<OffsetCommitResponse>;
  /**
   * A transaction marker reached `__consumer_offsets`-`partition` (written
   * there by the transaction coordinator): the offsets `producerId` committed
   * in that transaction become the groups' offsets (commit) or are dropped
   * (abort).
   */
  completeTxn(partition: number, producerId: number, committed: boolean): void;
  offsetFetch(req: OffsetFetchRequest): Promise<OffsetFetchResponse>;
  listGroups(req: ListGroupsRequest): Promise<ListGroupsResponse>;
  describeGroups(req: DescribeGroupsRequest): Promise<DescribeGroupsResponse>;
  deleteGroups(req: DeleteGroupsRequest): Promise<DeleteGroupsResponse>;
  /** Members, assignments, committed offsets, log ends and lag of one group; throws GROUP_ID_NOT_FOUND. */
  summarize(groupId: string): GroupSummary;
  /** Expires the offsets of groups empty for longer than offsetsRetentionMs (also runs on a timer). */
  expireOffsets(): Promise<number>;
  /**
   * Tombstones the offsets of `topics` (deleted from the cluster) committed up to `deletedAt` in every group held
   * here, so that a topic re-created under the same name does not inherit them; how many went.
   */
  removeTopicOffsets(topics: ReadonlySet<string>, deletedAt: number): Promise<number>;
  /** Removes groups empty, memberless and without offsets for groupEmptyRetentionMs (also runs on a timer); how many went. */
  expireEmptyGroups(): Promise<number>;
  /** Number of groups held (for metrics). */
  readonly groupCount: number;
  close(): void;
}

/** The producer of a TxnOffsetCommit (its transaction's id and epoch). */
export interface TxnProducer {
  producerId: number;
  producerEpoch: number;
}

interface PendingTxnOffset {
  groupId: string;
  key: string;
  value: CommittedOffset;
}

export function createGroupCoordinator(
  options: GroupCoordinatorOptions,
  components: GroupCoordinatorComponents,
): GroupCoordinator {
  return new Coordinator(parseGroupCoordinatorOptions(options), components);
}

class Coordinator implements GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly partitions = new Map<number, PartitionStatus>();
  /** Bumped by every load and unload of a partition: a load that finds it changed is stale. */
  private readonly loadSeq = new Map<number, number>();
  private readonly log: OffsetsLog;
  private readonly topics: TopicView;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: Logger;
  private readonly newMemberId: (clientId: string) => string;
  private expiryTimer?: TimerHandle;
  private emptyExpiryTimer?: TimerHandle;
  /** Per-connection token buckets for creating groups (idle full buckets are dropped by the empty-group sweep). */
  private readonly createBuckets = new Map<number, { tokens: number; at: number }>();
  private readonly commitQueues = new Map<number, CommitQueue>();
  /** Offsets committed inside open transactions (TxnOffsetCommit), per offsets partition and producer id: visible once their transaction commits. */
  private readonly pendingTxn = new Map<number, Map<number, PendingTxnOffset[]>>();
  private closed = false;

  constructor(
    readonly options: ParsedGroupCoordinatorOptions,
    components: GroupCoordinatorComponents,
  ) {
    this.log = components.offsetsLog;
    if (this.log.partitionCount !== options.offsetsTopicPartitions) {
      throw new MqError(
        'INVALID_CONFIG',
        `__consumer_offsets has ${this.log.partitionCount} partitions but offsetsTopicPartitions is ${options.offsetsTopicPartitions}`,
      );
    }
    this.topics = components.topics;
    this.clock = components.clock ?? systemClock;
    this.logger = components.logger ?? silentLogger;
    // A group's timer that throws logs an error; the coordinator keeps serving every other group.
    this.timers = guardTimers(components.timers ?? systemTimers, this.logger, 'group coordinator timer');
    this.newMemberId = components.newMemberId ?? ((clientId) => `${clientId || 'member'}-${randomUUID()}`);
    this.scheduleExpiry();
    this.scheduleEmptyExpiry();
  }

  get groupCount(): number {
    return this.groups.size;
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.options.offsetsTopicPartitions);
  }

  isCoordinatorFor(groupId: string): boolean {
    return this.isPartitionLoaded(this.partitionFor(groupId));
  }

  isPartitionLoaded(partition: number): boolean {
    return this.partitions.get(partition) === 'loaded';
  }

  /** Null when this coordinator serves the group, else the error to answer with. */
  private ownership(groupId: string): { code: ErrorCode; message: string } | null {
    if (this.closed) return { code: 'COORDINATOR_NOT_AVAILABLE', message: 'the group coordinator is shutting down' };
    const p = this.partitionFor(groupId);
    const status = this.partitions.get(p);
    if (status === 'loaded') return null;
    if (status === 'loading') {
      return { code: 'COORDINATOR_LOAD_IN_PROGRESS', message: `group state of __consumer_offsets-${p} is still loading; retry` };
    }
    return { code: 'NOT_COORDINATOR', message: `this broker does not coordinate group "${groupId}" (__consumer_offsets-${p})` };
  }

  // ------------------------------------------------------------------ loading

  async startup(): Promise<void> {
    for (let p = 0; p < this.options.offsetsTopicPartitions; p++) await this.loadPartition(p);
  }

  async loadPartition(partition: number): Promise<void> {
    if (this.closed || this.partitions.has(partition)) return;
    this.partitions.set(partition, 'loading');
    // An unload (or a newer load) while this one awaits makes it stale: it then stops without touching state.
    const seq = this.nextLoadSeq(partition);
    const stale = () => this.closed || this.loadSeq.get(partition) !== seq;
    try {
      await this.log.awaitLoadable?.(partition);
      if (stale()) return;
      const offsets = new Map<string, Map<string, CommittedOffset>>();
      const metadata = new Map<string, GroupValue>();
      const txnPending = new Map<number, Array<{ keyBuf: Buffer; value: Buffer | null; logOffset: number }>>();
      let position = this.log.startOffset(partition);
      const end = this.log.endOffset(partition);
      while (position < end) {
        const { records, nextOffset } = await this.log.read(partition, position, this.options.offsetsLoadBufferBytes);
        if (stale()) return;
        if (records.length === 0 || nextOffset <= position) break;
        for (const span of iterateBatches(records)) {
          const batch = decodeBatchSync(records, span.position);
          const h = batch.header;
          if (isControl(h)) {
            // A transaction marker: the offsets its producer committed in the transaction are applied (commit) or dropped.
            const record = batch.records[0];
            if (!record || record.offset < position) continue;
            const entries = txnPending.get(h.producerId) ?? [];
            txnPending.delete(h.producerId);
            if (markerKeyType(record.key) === 'commit') {
              for (const e of entries) this.applyRecord(e.keyBuf, e.value, e.logOffset, offsets, metadata);
            }
            continue;
          }
          for (const record of batch.records) {
            if (record.offset < position || !record.key) continue;
            if (isTransactional(h)) {
              let list = txnPending.get(h.producerId);
              if (!list) txnPending.set(h.producerId, (list = []));
              list.push({ keyBuf: record.key, value: record.value, logOffset: record.offset });
              continue;
            }
            this.applyRecord(record.key, record.value, record.offset, offsets, metadata);
          }
        }
        position = nextOffset;
      }
      if (stale()) return;
      const now = this.clock();
      for (const groupId of new Set([...offsets.keys(), ...metadata.keys()])) {
        const group = new Group(groupId, partition, now);
        const meta = metadata.get(groupId);
        if (meta) this.restoreGroup(group, meta);
        group.stored = meta !== undefined;
        for (const [k, v] of offsets.get(groupId) ?? []) group.offsets.set(k, v);
        this.groups.set(groupId, group);
      }
      // Transactions still open in this partition: their offsets wait for their markers.
      const open = new Map<number, PendingTxnOffset[]>();
      for (const [producerId, entries] of txnPending) {
        const list: PendingTxnOffset[] = [];
        for (const e of entries) {
          const key = decodeKey(e.keyBuf);
          if (key?.type !== 'offset' || !e.value) continue;
          list.push({ groupId: key.group, key: offsetKey(key.topic, key.partition), value: { ...decodeOffsetValue(e.value), logOffset: e.logOffset } });
        }
        if (list.length > 0) open.set(producerId, list);
      }
      if (open.size > 0) this.pendingTxn.set(partition, open);
      else this.pendingTxn.delete(partition);
      this.partitions.set(partition, 'loaded');
      if (offsets.size + metadata.size > 0) {
        this.logger.info({ partition, groups: new Set([...offsets.keys(), ...metadata.keys()]).size }, 'group state loaded');
      }
      // Topics deleted while no coordinator of this partition watched (during a failover, before this load) are not
      // announced again: their offsets are found here.
      if (offsets.size > 0) {
        this.removeOffsetsOfGoneTopics(partition).catch((e: unknown) => this.logger.warn({ partition, err: e }, 'could not remove the offsets of deleted topics'));
      }
    } catch (e) {
      if (!stale()) this.partitions.delete(partition);
      throw e;
    }
  }

  private nextLoadSeq(partition: number): number {
    const seq = (this.loadSeq.get(partition) ?? 0) + 1;
    this.loadSeq.set(partition, seq);
    return seq;
  }

  private applyRecord(
    keyBuf: Buffer,
    value: Buffer | null,
    logOffset: number,
    offsets: Map<string, Map<string, CommittedOffset>>,
    metadata: Map<string, GroupValue>,
  ) {
    const key = decodeKey(keyBuf);
    if (!key) return; // a key type from a newer version: skipped
    if (key.type === 'offset') {
      let g = offsets.get(key.group);
      if (value === null) {
        g?.delete(offsetKey(key.topic, key.partition));
        if (g && g.size === 0) offsets.delete(key.group);
        return;
      }
      if (!g) offsets.set(key.group, (g = new Map()));
      g.set(offsetKey(key.topic, key.partition), { ...decodeOffsetValue(value), logOffset });
    } else if (value === null) {
      metadata.delete(key.group);
      offsets.delete(key.group); // a group tombstone follows the offset tombstones of a delete
    } else {
      metadata.set(key.group, decodeGroupValue(value));
    }
  }

  private restoreGroup(group: Group, meta: GroupValue) {
    group.protocolType = meta.protocolType;
    group.generationId = meta.generationId;
    group.protocolName = meta.protocolName;
    group.leaderId = meta.leaderId;
    group.stateTimestamp = meta.stateTimestamp;
    if (meta.members.length === 0) {
      group.state = 'Empty';
      return;
    }
    group.state = 'Stable';
    for (const m of meta.members) {
      const member: Member = {
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        sessionTimeoutMs: m.sessionTimeoutMs,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        protocolType: meta.protocolType ?? '',
        protocols: [{ name: meta.protocolName ?? '', metadata: m.subscription }],
        assignment: m.assignment,
      };
      group.members.set(m.memberId, member);
      if (m.groupInstanceId) group.staticMembers.set(m.groupInstanceId, m.memberId);
      // Members must heartbeat to the new coordinator within their session timeout.
      this.scheduleSession(group, member);
    }
  }

  unloadPartition(partition: number): void {
    this.partitions.delete(partition);
    this.pendingTxn.delete(partition);
    this.nextLoadSeq(partition); // a load still running for it stops
    // Commits queued behind an append in flight are not appended by a coordinator that gave the partition up.
    const queue = this.commitQueues.get(partition);
    if (queue) {
      const gone = new MqError('NOT_COORDINATOR', `__consumer_offsets-${partition} moved to another coordinator`);
      for (const w of queue.waiting.splice(0)) w.reject(gone);
      this.commitQueues.delete(partition);
    }
    for (const [id, group] of this.groups) {
      if (group.partition !== partition) continue;
      this.dropGroup(group, 'NOT_COORDINATOR', `group "${id}" moved to another coordinator`);
      this.groups.delete(id);
    }
  }

  /** Cancels a group's timers and answers its waiting requests with an error. */
  private dropGroup(group: Group, code: ErrorCode, message: string) {
    if (group.joinTimer) this.timers.clearTimeout(group.joinTimer);
    group.joinTimer = undefined;
    for (const t of group.pendingMembers.values()) this.timers.clearTimeout(t);
    group.pendingMembers.clear();
    for (const m of group.members.values()) {
      if (m.sessionTimer) this.timers.clearTimeout(m.sessionTimer);
      m.sessionTimer = undefined;
      this.answerJoin(m, { ...err(code, message), memberId: m.memberId });
      this.answerSync(m, err(code, message));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.expiryTimer) this.timers.clearTimeout(this.expiryTimer);
    if (this.emptyExpiryTimer) this.timers.clearTimeout(this.emptyExpiryTimer);
    this.createBuckets.clear();
    for (const group of this.groups.values()) this.dropGroup(group, 'COORDINATOR_NOT_AVAILABLE', 'the group coordinator is shutting down');
    this.groups.clear();
    this.partitions.clear();
  }

  // ---------------------------------------------------------------- join

  async joinGroup(req: JoinGroupRequest, ctx: RequestContext): Promise<JoinGroupResponse> {
    const groupId = req.groupId ?? '';
    const memberId = req.memberId ?? '';
    const instanceId = req.groupInstanceId || null;
    const fail = (code: ErrorCode, message: string): JoinGroupResponse => ({ ...err(code, message), memberId, generationId: -1 });
    const protocolType = req.protocolType ?? '';
    const protocols: Protocol[] = (req.protocols ?? []).map((p) => ({ name: p.name ?? '', metadata: toBuffer(p.metadata) }));
    // Everything a join stores must fit the offsets schema: refused here, not when a timer stores the group.
    const bad = firstProblem(
      groupIdProblem(groupId),
      memberIdProblem(memberId),
      instanceIdProblem(instanceId),
      clientIdProblem(ctx.clientId),
      protocolNameProblem('protocol type', protocolType),
      ...protocols.map((p) => protocolNameProblem('protocol name', p.name)),
    );
    if (bad) return fail(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return fail(owner.code, owner.message);
    const sessionTimeoutMs = req.sessionTimeoutMs ?? 0;
    const { groupMinSessionTimeoutMs: min, groupMaxSessionTimeoutMs: max } = this.options;
    const badTimeout = firstProblem(
      durationProblem('session timeout', sessionTimeoutMs, min, max, 'INVALID_SESSION_TIMEOUT'),
      // 0: the session timeout (JoinGroup v0). A timer cannot hold more than 2^31-1 ms (Kafka's int32).
      req.rebalanceTimeoutMs ? durationProblem('rebalance timeout', req.rebalanceTimeoutMs, 1, Number.MAX_SAFE_INTEGER) : undefined,
    );
    if (badTimeout) return fail(badTimeout.code, badTimeout.message);
    const rebalanceTimeoutMs = req.rebalanceTimeoutMs || sessionTimeoutMs;
    if (protocolType === '' || protocols.length === 0 || protocols.some((p) => p.name === '')) {
      return fail('INCONSISTENT_GROUP_PROTOCOL', 'a join needs a protocol type and at least one named protocol');
    }

    let group = this.groups.get(groupId);
    if (!group) {
      if (memberId !== '') return fail('UNKNOWN_MEMBER_ID', `group "${groupId}" has no member "${memberId}" (rejoin with an empty member id)`);
      const refused = this.admitNewGroup(groupId, ctx);
      if (refused) return fail(refused.code, refused.message);
      group = new Group(groupId, this.partitionFor(groupId), this.clock());
      this.groups.set(groupId, group);
    }
    if (group.state === 'Dead') return fail('COORDINATOR_NOT_AVAILABLE', `group "${groupId}" is being deleted; retry`);
    if (!group.supportsProtocols(protocolType, protocols.map((p) => p.name))) {
      return fail(
        'INCONSISTENT_GROUP_PROTOCOL',
        `group "${groupId}" uses protocol type "${group.protocolType}" with protocols [${group.candidateProtocols().join(', ')}]; ` +
          `this member offers "${protocolType}" [${protocols.map((p) => p.name).join(', ')}]`,
      );
    }
    const joining = { instanceId, sessionTimeoutMs, rebalanceTimeoutMs, protocolType, protocols, ctx };
    if (memberId === '') return this.joinNewMember(group, joining);
    return this.joinKnownMember(group, memberId, joining);
  }

  private joinNewMember(group: Group, j: Joining): Promise<JoinGroupResponse> | JoinGroupResponse {
    const newId = this.newMemberId(j.ctx.clientId);
    if (j.instanceId) {
      const existing = group.staticMembers.get(j.instanceId);
      if (existing !== undefined && group.members.has(existing)) return this.replaceStaticMember(group, existing, newId, j);
    }
    if (group.members.size + group.pendingMembers.size >= this.options.groupMaxSize) {
      return { ...err('GROUP_MAX_SIZE_REACHED', `group "${group.groupId}" already has ${this.options.groupMaxSize} members`), memberId: '', generationId: -1 };
    }
    if (j.instanceId) return this.addMemberAndRebalance(group, newId, j);
    // Dynamic members first get an id, then join with it (KIP-394), so a
    // client that times out and retries does not leave a ghost member behind.
    // The id is expected back at once: it is held for the session timeout, at most
    // groupEmptyRetentionMs, so joins that never come back cannot keep a group alive.
    const expiry = this.timers.setTimeout(
      () => {
        if (group.pendingMembers.delete(newId)) this.tryCompleteJoin(group);
      },
      Math.min(j.sessionTimeoutMs, this.options.groupEmptyRetentionMs),
    );
    group.pendingMembers.set(newId, expiry);
    return { ...err('MEMBER_ID_REQUIRED', 'rejoin with the member id given in this response'), memberId: newId, generationId: -1 };
  }

  private joinKnownMember(group: Group, memberId: string, j: Joining): Promise<JoinGroupResponse> | JoinGroupResponse {
    const pending = group.pendingMembers.get(memberId);
    if (pending !== undefined) {
      this.timers.clearTimeout(pending);
      group.pendingMembers.delete(memberId);
      return this.addMemberAndRebalance(group, memberId, j);
    }
    const member = group.members.get(memberId);
    const fail = (code: ErrorCode, message: string): JoinGroupResponse => ({ ...err(code, message), memberId, generationId: -1 });
    const fenced = this.checkInstance(group, memberId, j.instanceId);
    if (fenced && (member || fenced.code === 'FENCED_INSTANCE_ID')) return fail(fenced.code, fenced.message);
    if (!member) return fail('UNKNOWN_MEMBER_ID', `group "${shown(group.groupId)}" has no member "${shown(memberId)}" (rejoin with an empty member id)`);
    const protocolsChanged = !sameProtocols(member.protocols, j.protocols);
    updateMember(member, j);
    switch (group.state) {
      case 'PreparingRebalance':
        return this.awaitJoin(group, member);
      case 'CompletingRebalance':
        if (!protocolsChanged) return this.joinResponse(group, member);
        this.prepareRebalance(group, `member ${memberId} changed its protocols`);
        return this.awaitJoin(group, member);
      case 'Stable':
        if (member.memberId === group.leaderId || protocolsChanged) {
          this.prepareRebalance(group, `${member.memberId === group.leaderId ? 'leader' : 'member'} ${memberId} rejoined`);
          return this.awaitJoin(group, member);
        }
        return this.joinResponse(group, member);
      default:
        return fail('UNKNOWN_MEMBER_ID', `group "${shown(group.groupId)}" has no member "${shown(memberId)}"`);
    }
  }

  /** A static member restarted: the new member id replaces the old one, keeping its assignment. */
  private replaceStaticMember(group: Group, oldId: string, newId: string, j: Joining): Promise<JoinGroupResponse> | JoinGroupResponse {
    const old = group.members.get(oldId)!;
    const fenced = `member "${oldId}" was replaced by a new member with group instance id "${j.instanceId}"`;
    this.answerJoin(old, { ...err('FENCED_INSTANCE_ID', fenced), memberId: oldId, generationId: -1 });
    this.answerSync(old, err('FENCED_INSTANCE_ID', fenced));
    if (old.sessionTimer) this.timers.clearTimeout(old.sessionTimer);
    // As in Kafka (KIP-345/814): no rebalance unless the selected protocol or the subscribed topics changed.
    const protocolsChanged = !sameSubscription(group, old.protocols, j.protocols);
    group.members.delete(oldId);
    const member: Member = { ...old, memberId: newId, awaitingJoin: undefined, awaitingSync: undefined, sessionTimer: undefined };
    updateMember(member, j);
    group.members.set(newId, member);
    group.staticMembers.set(j.instanceId!, newId);
    if (group.leaderId === oldId) group.leaderId = newId;
    this.logger.info({ group: group.groupId, oldId, newId, instanceId: j.instanceId }, 'static member replaced');
    if (group.state === 'Stable' && !protocolsChanged) {
      this.scheduleSession(group, member);
      // Persist the new member id so a coordinator restart does not fence the live member.
      return this.storeGroup(group).then(
        () => ({ ...this.joinResponse(group, member), skipAssignment: member.memberId === group.leaderId }),
        (e) => ({ ...err(codeOf(e), `could not store the group: ${(e as Error).message}`), memberId: newId, generationId: -1 }),
      );
    }
    if (group.state === 'Stable' || group.state === 'CompletingRebalance') {
      this.prepareRebalance(group, `static member ${j.instanceId} rejoined with new protocols`);
    }
    return this.awaitJoin(group, member);
  }

  private addMemberAndRebalance(group: Group, memberId: string, j: Joining): Promise<JoinGroupResponse> {
    const member: Member = {
      memberId,
      groupInstanceId: j.instanceId,
      clientId: j.ctx.clientId,
      clientHost: j.ctx.clientHost,
      sessionTimeoutMs: j.sessionTimeoutMs,
      rebalanceTimeoutMs: j.rebalanceTimeoutMs,
      protocolType: j.protocolType,
      protocols: j.protocols,
      assignment: Buffer.alloc(0),
    };
    if (group.members.size === 0) group.protocolType = j.protocolType;
    group.members.set(memberId, member);
    if (j.instanceId) group.staticMembers.set(j.instanceId, memberId);
    if (group.initialDelay) group.initialDelay.newMemberAdded = true;
    const promise = this.awaitJoin(group, member);
    if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
    else this.prepareRebalance(group, `member ${memberId} joined`);
    return promise;
  }

  private awaitJoin(group: Group, member: Member): Promise<JoinGroupResponse> {
    // A member that re-sends its join replaces its earlier waiting join.
    this.answerJoin(member, { ...err('REBALANCE_IN_PROGRESS', 'superseded by a newer join from the same member'), memberId: member.memberId });
    const promise = new Promise<JoinGroupResponse>((resolve) => {
      member.awaitingJoin = resolve;
    });
    if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
    return promise;
  }

  private answerJoin(member: Member, response: JoinGroupResponse) {
    const resolve = member.awaitingJoin;
    member.awaitingJoin = undefined;
    resolve?.(response);
  }

  private answerSync(member: Member, response: SyncGroupResponse) {
    const resolve = member.awaitingSync;
    member.awaitingSync = undefined;
    resolve?.(response);
  }

  private joinResponse(group: Group, member: Member): JoinGroupResponse {
    const isLeader = member.memberId === group.leaderId;
    return {
      errorCode: NONE,
      generationId: group.generationId,
      protocolType: group.protocolType ?? '',
      protocolName: group.protocolName ?? '',
      leader: group.leaderId ?? '',
      memberId: member.memberId,
      members: isLeader
        ? [...group.members.values()].map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId ?? '',
            metadata: group.metadataOf(m),
          }))
        : [],
    };
  }

  private prepareRebalance(group: Group, reason: string) {
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        m.assignment = Buffer.alloc(0);
        this.answerSync(m, err('REBALANCE_IN_PROGRESS', 'the group is rebalancing; rejoin'));
      }
    }
    if (group.joinTimer) this.timers.clearTimeout(group.joinTimer);
    const wasEmpty = group.state === 'Empty';
    group.transition('PreparingRebalance', this.clock());
    this.logger.info({ group: group.groupId, generation: group.generationId, reason }, 'preparing to rebalance');
    const rebalanceTimeout = group.rebalanceTimeoutMs();
    const delay = this.options.groupInitialRebalanceDelayMs;
    if (wasEmpty && delay > 0) {
      const first = Math.min(delay, rebalanceTimeout);
      group.initialDelay = { remainingMs: rebalanceTimeout - first, newMemberAdded: false };
      group.joinTimer = this.timers.setTimeout(() => this.onInitialDelay(group), first);
      return;
    }
    group.initialDelay = undefined;
    group.joinTimer = this.timers.setTimeout(() => this.completeJoin(group), rebalanceTimeout);
    this.tryCompleteJoin(group);
  }

  private onInitialDelay(group: Group) {
    const d = group.initialDelay;
    group.joinTimer = undefined;
    if (!d) return;
    if (d.newMemberAdded && d.remainingMs > 0) {
      const next = Math.min(this.options.groupInitialRebalanceDelayMs, d.remainingMs);
      group.initialDelay = { remainingMs: d.remainingMs - next, newMemberAdded: false };
      group.joinTimer = this.timers.setTimeout(() => this.onInitialDelay(group), next);
      return;
    }
    group.initialDelay = undefined;
    this.completeJoin(group);
  }

  private tryCompleteJoin(group: Group) {
    if (group.state !== 'PreparingRebalance' || group.initialDelay) return;
    if (group.allMembersJoined()) this.completeJoin(group);
  }

  private completeJoin(group: Group) {
    if (group.state !== 'PreparingRebalance') return;
    if (group.joinTimer) this.timers.clearTimeout(group.joinTimer);
    group.joinTimer = undefined;
    group.initialDelay = undefined;
    // Members that did not rejoin within the rebalance timeout are out.
    for (const m of [...group.members.values()]) {
      if (!m.awaitingJoin) this.removeMemberOnly(group, m, 'did not rejoin within the rebalance timeout');
    }
    const now = this.clock();
    group.generationId++;
    if (group.members.size === 0) {
      group.protocolName = null;
      group.leaderId = null;
      group.transition('Empty', now);
      this.logger.info({ group: group.groupId, generation: group.generationId }, 'group is empty');
      this.storeGroup(group).catch((e) => this.logger.error({ group: group.groupId, err: e }, 'could not store the empty group'));
      return;
    }
    group.protocolName = group.selectProtocol();
    if (!group.leaderId || !group.members.has(group.leaderId)) group.leaderId = group.members.keys().next().value!;
    group.transition('CompletingRebalance', now);
    this.logger.info(
      { group: group.groupId, generation: group.generationId, members: group.members.size, protocol: group.protocolName },
      'rebalance: all members joined',
    );
    for (const m of group.members.values()) {
      this.answerJoin(m, this.joinResponse(group, m));
      this.scheduleSession(group, m);
    }
  }

  // ---------------------------------------------------------------- sync

  async syncGroup(req: SyncGroupRequest): Promise<SyncGroupResponse> {
    const groupId = req.groupId ?? '';
    const bad = groupIdProblem(groupId);
    if (bad) return err(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return err(owner.code, owner.message);
    const memberId = req.memberId ?? '';
    const group = this.groups.get(groupId);
    const fenced = group && this.checkInstance(group, memberId, req.groupInstanceId || null);
    if (fenced) return err(fenced.code, fenced.message);
    const member = group?.members.get(memberId);
    if (!group || !member) return err('UNKNOWN_MEMBER_ID', `group "${shown(groupId)}" has no member "${shown(memberId)}"`);
    if ((req.generationId ?? -1) !== group.generationId) {
      return err('ILLEGAL_GENERATION', `generation ${req.generationId} is stale; the group is at generation ${group.generationId} (rejoin)`);
    }
    if ((req.protocolType && req.protocolType !== group.protocolType) || (req.protocolName && req.protocolName !== group.protocolName)) {
      return err(
        'INCONSISTENT_GROUP_PROTOCOL',
        `the group uses ${group.protocolType}/${group.protocolName}, not ${req.protocolType}/${req.protocolName}`,
      );
    }
    const assignments = req.assignments ?? [];
    if (assignments.length > 0 && memberId !== group.leaderId) {
      return err('INVALID_ASSIGNMENT', `member "${memberId}" is not the group leader and may not send assignments`);
    }
    switch (group.state) {
      case 'PreparingRebalance':
        return err('REBALANCE_IN_PROGRESS', 'the group is rebalancing; rejoin');
      case 'Stable':
        this.scheduleSession(group, member);
        return this.syncResponse(group, member);
      case 'CompletingRebalance':
        break;
      default:
        return err('UNKNOWN_MEMBER_ID', `group "${shown(groupId)}" has no member "${shown(memberId)}"`);
    }
    this.scheduleSession(group, member);
    if (memberId === group.leaderId) {
      const byMember = new Map<string, Buffer>();
      for (const a of assignments) {
        const id = a.memberId ?? '';
        if (byMember.has(id)) return err('INVALID_ASSIGNMENT', `the assignment names member "${id}" twice`);
        if (!group.members.has(id)) return err('INVALID_ASSIGNMENT', `the assignment names "${id}", which is not a member of generation ${group.generationId}`);
        byMember.set(id, toBuffer(a.assignment));
      }
      if (group.protocolType === 'consumer') {
        const problem = checkConsumerAssignment(group, byMember, this.topics);
        if (problem) return err('INVALID_ASSIGNMENT', problem);
      }
      const promise = this.waitSync(member);
      this.completeSync(group, byMember);
      return promise;
    }
    return this.waitSync(member);
  }

  private waitSync(member: Member): Promise<SyncGroupResponse> {
    this.answerSync(member, err('REBALANCE_IN_PROGRESS', 'superseded by a newer sync from the same member'));
    return new Promise((resolve) => {
      member.awaitingSync = resolve;
    });
  }

  private syncResponse(group: Group, member: Member): SyncGroupResponse {
    return { errorCode: NONE, protocolType: group.protocolType ?? '', protocolName: group.protocolName ?? '', assignment: member.assignment };
  }

  private completeSync(group: Group, byMember: Map<string, Buffer>) {
    const generation = group.generationId;
    for (const m of group.members.values()) m.assignment = byMember.get(m.memberId) ?? Buffer.alloc(0);
    this.storeGroup(group).then(
      () => {
        if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
        group.transition('Stable', this.clock());
        this.logger.info({ group: group.groupId, generation }, 'group is stable');
        for (const m of group.members.values()) this.answerSync(m, this.syncResponse(group, m));
      },
      (e) => {
        if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
        // The offsets partition moving (failover) is ordinary: its members re-find the coordinator and rejoin.
        if (COORDINATOR_MOVED.has(codeOf(e))) this.logger.info({ group: group.groupId, code: codeOf(e), err: (e as Error).message }, 'group assignment not stored: the coordinator moved; members rejoin');
        else this.logger.error({ group: group.groupId, err: e }, 'could not store the group assignment');
        for (const m of group.members.values()) {
          m.assignment = Buffer.alloc(0);
          this.answerSync(m, err(codeOf(e), `could not store the group assignment: ${(e as Error).message}`));
        }
        this.prepareRebalance(group, 'the assignment could not be stored');
      },
    );
  }

  // ---------------------------------------------------------- heartbeat, leave

  async heartbeat(req: HeartbeatRequest): Promise<HeartbeatResponse> {
    const groupId = req.groupId ?? '';
    const bad = groupIdProblem(groupId);
    if (bad) return err(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return err(owner.code, owner.message);
    const memberId = req.memberId ?? '';
    const group = this.groups.get(groupId);
    const fenced = group && this.checkInstance(group, memberId, req.groupInstanceId || null);
    if (fenced) return err(fenced.code, fenced.message);
    const member = group?.members.get(memberId);
    if (!group || !member) return err('UNKNOWN_MEMBER_ID', `group "${groupId}" has no member "${memberId}" (rejoin)`);
    if ((req.generationId ?? -1) !== group.generationId) {
      return err('ILLEGAL_GENERATION', `generation ${req.generationId} is stale; the group is at generation ${group.generationId} (rejoin)`);
    }
    this.scheduleSession(group, member);
    if (group.state === 'PreparingRebalance') return err('REBALANCE_IN_PROGRESS', 'the group is rebalancing; rejoin');
    return { errorCode: NONE };
  }

  async leaveGroup(req: LeaveGroupRequest): Promise<LeaveGroupResponse> {
    const groupId = req.groupId ?? '';
    const bad = groupIdProblem(groupId);
    if (bad) return err(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return err(owner.code, owner.message);
    const group = this.groups.get(groupId);
    if (!group) return err('UNKNOWN_MEMBER_ID', `group "${groupId}" does not exist`);
    let firstError: LeaveGroupResponse | undefined;
    for (const who of req.members ?? []) {
      let memberId = who.memberId ?? '';
      const instanceId = who.groupInstanceId || null;
      if (instanceId && memberId === '') memberId = group.staticMembers.get(instanceId) ?? '';
      const pending = group.pendingMembers.get(memberId);
      if (pending !== undefined) {
        this.timers.clearTimeout(pending);
        group.pendingMembers.delete(memberId);
        this.tryCompleteJoin(group);
        continue;
      }
      const member = group.members.get(memberId);
      if (!member) {
        firstError ??= err('UNKNOWN_MEMBER_ID', `group "${groupId}" has no member "${who.memberId || instanceId}"`);
        continue;
      }
      const fenced = this.checkInstance(group, memberId, instanceId);
      if (fenced) {
        firstError ??= err(fenced.code, fenced.message);
        continue;
      }
      this.removeMemberAndUpdate(group, member, who.reason || 'left the group');
    }
    return firstError ?? { errorCode: NONE };
  }

  /** Null when the instance id (if any) belongs to this member. */
  private checkInstance(group: Group, memberId: string, instanceId: string | null): { code: ErrorCode; message: string } | null {
    if (!instanceId) return null;
    const current = group.staticMembers.get(instanceId);
    if (current === undefined) return { code: 'UNKNOWN_MEMBER_ID', message: `group "${shown(group.groupId)}" has no instance "${shown(instanceId)}"` };
    if (current !== memberId) {
      return { code: 'FENCED_INSTANCE_ID', message: `instance "${shown(instanceId)}" is now member "${shown(current)}"; member "${shown(memberId)}" is fenced` };
    }
    return null;
  }

  private scheduleSession(group: Group, member: Member) {
    if (member.sessionTimer) this.timers.clearTimeout(member.sessionTimer);
    member.sessionTimer = this.timers.setTimeout(() => this.onSessionExpired(group, member), member.sessionTimeoutMs);
  }

  private onSessionExpired(group: Group, member: Member) {
    member.sessionTimer = undefined;
    if (group.members.get(member.memberId) !== member) return;
    // A member waiting on a join or a sync is alive; the rebalance timeout governs it.
    if (member.awaitingJoin || member.awaitingSync) {
      this.scheduleSession(group, member);
      return;
    }
    this.removeMemberAndUpdate(group, member, `session timeout (${member.sessionTimeoutMs} ms) expired`);
  }

  /** Removes a member without triggering anything (its waiting requests get UNKNOWN_MEMBER_ID). */
  private removeMemberOnly(group: Group, member: Member, reason: string) {
    if (member.sessionTimer) this.timers.clearTimeout(member.sessionTimer);
    member.sessionTimer = undefined;
    group.members.delete(member.memberId);
    if (member.groupInstanceId && group.staticMembers.get(member.groupInstanceId) === member.memberId) {
      group.staticMembers.delete(member.groupInstanceId);
    }
    const gone = `member "${member.memberId}" was removed from group "${group.groupId}": ${reason}`;
    this.answerJoin(member, { ...err('UNKNOWN_MEMBER_ID', gone), memberId: member.memberId, generationId: -1 });
    this.answerSync(member, err('UNKNOWN_MEMBER_ID', gone));
    this.logger.info({ group: group.groupId, memberId: member.memberId, reason }, 'member removed');
  }

  private removeMemberAndUpdate(group: Group, member: Member, reason: string) {
    this.removeMemberOnly(group, member, reason);
    if (group.state === 'Stable' || group.state === 'CompletingRebalance') this.prepareRebalance(group, `member ${member.memberId} ${reason}`);
    else if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
  }

  // ---------------------------------------------------------------- offsets

  completeTxn(partition: number, producerId: number, committed: boolean): void {
    const byProducer = this.pendingTxn.get(partition);
    const entries = byProducer?.get(producerId);
    if (!byProducer || !entries) return;
    byProducer.delete(producerId);
    if (byProducer.size === 0) this.pendingTxn.delete(partition);
    if (!committed || this.partitions.get(partition) !== 'loaded') return;
    const now = this.clock();
    for (const e of entries) {
      let group = this.groups.get(e.groupId);
      if (!group) {
        group = new Group(e.groupId, partition, now);
        this.groups.set(e.groupId, group);
      }
      const prev = group.offsets.get(e.key);
      if (!prev || prev.logOffset < e.value.logOffset) group.offsets.set(e.key, e.value);
    }
  }

  /**
   * OffsetCommit, or with `txn` TxnOffsetCommit: the same checks; the offsets
   * are appended as a transactional batch of the producer (acks=all) and
   * held back until its transaction's marker reaches this partition
   * (completeTxn).
   */
  async offsetCommit(req: OffsetCommitRequest, ctx?: RequestContext, txn?: TxnProducer): Promise<OffsetCommitResponse> {
    const groupId = req.groupId ?? '';
    const topicsIn = req.topics ?? [];
    const answer = (fn: (topic: string, partition: number) => { errorCode: number; errorMessage?: string }) => ({
      topics: topicsIn.map((t) => ({
        name: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({ partition: p.partition ?? 0, ...fn(t.name ?? '', p.partition ?? 0) })),
      })),
    });
    const all = (code: ErrorCode, message: string) => answer(() => err(code, message));
    const generationId = req.generationId ?? -1;
    const memberId = req.memberId ?? '';
    const bad = groupIdProblem(groupId) ?? memberIdProblem(memberId) ?? instanceIdProblem(req.groupInstanceId);
    if (bad) return all(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return all(owner.code, owner.message);
    let group = this.groups.get(groupId);
    if (generationId < 0 && memberId === '') {
      // A commit from outside the group (admin tools, manual assignment).
      if (group && group.hasActiveMembers()) {
        return all(
          'NON_EMPTY_GROUP',
          `group "${shown(groupId)}" has active members; offsets can only be committed from outside the group while it is empty`,
        );
      }
      if (group?.state === 'Dead') return all('COORDINATOR_NOT_AVAILABLE', `group "${shown(groupId)}" is being deleted; retry`);
    } else {
      const fenced = group && this.checkInstance(group, memberId, req.groupInstanceId || null);
      if (fenced) return all(fenced.code, fenced.message);
      const member = group?.members.get(memberId);
      if (!group || !member) return all('UNKNOWN_MEMBER_ID', `group "${shown(groupId)}" has no member "${shown(memberId)}" (rejoin)`);
      if (generationId !== group.generationId) {
        return all('ILLEGAL_GENERATION', `commit from generation ${generationId} refused; the group is at generation ${group.generationId} (rejoin)`);
      }
      if (group.state === 'CompletingRebalance') return all('REBALANCE_IN_PROGRESS', 'the group is completing a rebalance; rejoin and commit again');
      this.scheduleSession(group, member);
    }

    const now = this.clock();
    const results = new Map<string, { errorCode: number; errorMessage?: string }>();
    const records: RecordInput[] = [];
    const accepted: Array<{ key: string; value: Omit<CommittedOffset, 'logOffset'> }> = [];
    for (const t of topicsIn) {
      const topic = t.name ?? '';
      const count = this.topics.partitionCount(topic);
      for (const p of t.partitions ?? []) {
        const partition = p.partition ?? 0;
        const key = offsetKey(topic, partition);
        const offset = p.committedOffset ?? 0;
        const metadata = p.metadata ?? '';
        if (count === undefined || partition >= count) {
          results.set(key, err('UNKNOWN_TOPIC_OR_PARTITION', `partition ${shown(topic)}-${partition} does not exist`));
          continue;
        }
        const end = this.topics.logEndOffset(topic, partition);
        if (!Number.isSafeInteger(offset) || offset < 0) {
          results.set(key, err('INVALID_COMMIT_OFFSET', `offset ${offset} for ${shown(topic)}-${partition} is negative`));
          continue;
        }
        if (end !== undefined && offset > end) {
          results.set(key, err('INVALID_COMMIT_OFFSET', `offset ${offset} for ${topic}-${partition} is beyond its log end ${end}`));
          continue;
        }
        if (Buffer.byteLength(metadata, 'utf8') > this.options.offsetMetadataMaxBytes) {
          results.set(key, err('OFFSET_METADATA_TOO_LARGE', `commit metadata is larger than ${this.options.offsetMetadataMaxBytes} bytes`));
          continue;
        }
        const topicId = this.topics.topicId?.(topic);
        const value = { offset, leaderEpoch: p.committedLeaderEpoch ?? -1, metadata, commitTimestamp: now, ...(topicId ? { topicId } : {}) };
        records.push({ key: encodeKey({ type: 'offset', group: groupId, topic, partition }), value: encodeOffsetValue(value) });
        accepted.push({ key, value });
      }
    }
    if (records.length > 0) {
      if (!group) {
        const refused = this.admitNewGroup(groupId, ctx);
        if (refused) return all(refused.code, refused.message);
        group = new Group(groupId, this.partitionFor(groupId), now);
        this.groups.set(groupId, group);
      }
      group.pendingWrites++;
      if (txn) {
        try {
          const batch = encodeBatchSync(records, { now, producerId: txn.producerId, producerEpoch: txn.producerEpoch, baseSequence: -1, transactional: true });
          const { baseOffset } = await this.log.append(group.partition, batch, { coordinator: true });
          let byProducer = this.pendingTxn.get(group.partition);
          if (!byProducer) this.pendingTxn.set(group.partition, (byProducer = new Map()));
          let list = byProducer.get(txn.producerId);
          if (!list) byProducer.set(txn.producerId, (list = []));
          accepted.forEach((a, i) => {
            list.push({ groupId, key: a.key, value: { ...a.value, logOffset: baseOffset + i } });
            results.set(a.key, { errorCode: NONE });
          });
        } catch (e) {
          const code = codeOf(e);
          for (const a of accepted) results.set(a.key, err(code, `transactional commit was not stored: ${(e as Error).message}`));
        } finally {
          group.pendingWrites--;
        }
        return answer((topic, partition) => results.get(offsetKey(topic, partition)) ?? { errorCode: NONE });
      }
      try {
        const baseOffset = await this.appendCommit(group.partition, records);
        accepted.forEach((a, i) => {
          const prev = group!.offsets.get(a.key);
          if (!prev || prev.logOffset < baseOffset + i) group!.offsets.set(a.key, { ...a.value, logOffset: baseOffset + i });
          results.set(a.key, { errorCode: NONE });
        });
      } catch (e) {
        const code = codeOf(e);
        for (const a of accepted) results.set(a.key, err(code, `commit was not stored: ${(e as Error).message}`));
        if (group.offsets.size === 0 && !group.hasActiveMembers() && group.protocolType === null) this.groups.delete(groupId);
      } finally {
        group.pendingWrites--;
      }
    }
    return answer((topic, partition) => results.get(offsetKey(topic, partition)) ?? { errorCode: NONE });
  }

  async offsetFetch(req: OffsetFetchRequest): Promise<OffsetFetchResponse> {
    const groupId = req.groupId ?? '';
    const bad = groupIdProblem(groupId);
    if (bad) return err(bad.code, bad.message);
    const owner = this.ownership(groupId);
    if (owner) return err(owner.code, owner.message);
    const group = this.groups.get(groupId);
    const none = { committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: NONE };
    // KIP-447: with require_stable, a partition with an offset committed in a still-open transaction is unstable.
    const unstable = req.requireStable && group ? this.pendingTxnKeys(group) : undefined;
    const answer = (key: string, partition: number, c: CommittedOffset | undefined): mq.OffsetFetchPartitionResponse.$Properties => {
      if (unstable?.has(key)) return { partition, ...none, errorCode: errorNumber('UNSTABLE_OFFSET_COMMIT') };
      return c ? { partition, committedOffset: c.offset, committedLeaderEpoch: c.leaderEpoch, metadata: c.metadata, errorCode: NONE } : { partition, ...none };
    };
    const wanted = req.topics ?? [];
    if (wanted.length === 0) {
      const byTopic = new Map<string, mq.OffsetFetchPartitionResponse.$Properties[]>();
      const keys = new Set([...(group?.offsets.keys() ?? []), ...(unstable ?? [])]);
      for (const key of keys) {
        const { topic, partition } = splitOffsetKey(key);
        let list = byTopic.get(topic);
        if (!list) byTopic.set(topic, (list = []));
        list.push(answer(key, partition, group?.offsets.get(key)));
      }
      return {
        errorCode: NONE,
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions: partitions.sort((a, b) => a.partition! - b.partition!) })),
      };
    }
    return {
      errorCode: NONE,
      topics: wanted.map((t) => ({
        name: t.name ?? '',
        partitions: (t.partitions ?? []).map((partition) => {
          const key = offsetKey(t.name ?? '', partition);
          return answer(key, partition, group?.offsets.get(key));
        }),
      })),
    };
  }

  /** The offset keys of `group` committed inside transactions that have not ended yet. */
  private pendingTxnKeys(group: Group): Set<string> {
    const keys = new Set<string>();
    for (const list of this.pendingTxn.get(group.partition)?.values() ?? []) {
      for (const p of list) if (p.groupId === group.groupId) keys.add(p.key);
    }
    return keys;
  }

  // --------------------------------------------------------------- admin

  async listGroups(req: ListGroupsRequest): Promise<ListGroupsResponse> {
    const filter = (req.statesFilter ?? []).map((s) => s.toLowerCase());
    const groups = [];
    for (const g of this.groups.values()) {
      if (!this.isCoordinatorFor(g.groupId) || g.state === 'Dead') continue;
      if (filter.length > 0 && !filter.includes(g.state.toLowerCase())) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state });
    }
    groups.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
    return { errorCode: NONE, groups };
  }

  async describeGroups(req: DescribeGroupsRequest): Promise<DescribeGroupsResponse> {
    // The answer's size is known before it is built: past the budget, a group is not described.
    let budget = this.options.describeGroupsMaxBytes;
    return {
      groups: [...new Set(req.groupIds ?? [])].map((groupId) => {
        const owner = this.ownership(groupId);
        if (owner) return { groupId, state: 'Dead', ...err(owner.code, owner.message) };
        const g = this.groups.get(groupId);
        if (!g || g.state === 'Dead') return { groupId, state: 'Dead', ...err('GROUP_ID_NOT_FOUND', `group "${groupId}" does not exist`) };
        const size = describedBytes(g);
        if (size > budget) {
          const limit = this.options.describeGroupsMaxBytes;
          return { groupId, state: g.state, ...err('MESSAGE_TOO_LARGE', `describing group "${groupId}" would pass the ${limit}-byte answer limit; describe fewer groups per request`) };
        }
        budget -= size;
        return {
          errorCode: NONE,
          groupId,
          state: g.state,
          protocolType: g.protocolType ?? '',
          protocol: g.protocolName ?? '',
          generationId: g.generationId,
          leader: g.leaderId ?? '',
          members: [...g.members.values()].map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId ?? '',
            clientId: m.clientId,
            clientHost: m.clientHost,
            metadata: g.metadataOf(m),
            assignment: m.assignment,
          })),
        };
      }),
    };
  }

  async deleteGroups(req: DeleteGroupsRequest): Promise<DeleteGroupsResponse> {
    const results = [];
    for (const groupId of req.groupIds ?? []) {
      const owner = this.ownership(groupId);
      if (owner) {
        results.push({ groupId, ...err(owner.code, owner.message) });
        continue;
      }
      const g = this.groups.get(groupId);
      if (!g || g.state === 'Dead') {
        results.push({ groupId, ...err('GROUP_ID_NOT_FOUND', `group "${groupId}" does not exist`) });
        continue;
      }
      if (g.hasActiveMembers() || g.state !== 'Empty') {
        results.push({ groupId, ...err('NON_EMPTY_GROUP', `group "${groupId}" has active members; stop its consumers first`) });
        continue;
      }
      try {
        await this.removeGroup(g, [...g.offsets.keys()]);
        results.push({ groupId, errorCode: NONE });
      } catch (e) {
        results.push({ groupId, ...err(codeOf(e), `group "${groupId}" was not deleted: ${(e as Error).message}`) });
      }
    }
    return { results };
  }

  /**
   * Writes tombstones for the given offsets; when that leaves an empty group
   * with no offsets, also for its metadata, and the group is gone (Dead).
   */
  private async removeGroup(g: Group, offsetKeys: string[]): Promise<void> {
    const whole = offsetKeys.length === g.offsets.size && !g.hasActiveMembers() && g.state === 'Empty';
    const records: RecordInput[] = offsetKeys.map((k) => {
      const { topic, partition } = splitOffsetKey(k);
      return { key: encodeKey({ type: 'offset', group: g.groupId, topic, partition }), value: null };
    });
    if (whole) records.push({ key: encodeKey({ type: 'group', group: g.groupId }), value: null });
    if (records.length === 0) return;
    const previousState = g.state;
    if (whole) g.transition('Dead', this.clock()); // refuse joins and commits while the tombstones are written
    try {
      await this.log.append(g.partition, encodeBatchSync(records, { now: this.clock() }));
    } catch (e) {
      if (whole) g.transition(previousState, g.stateTimestamp);
      throw e;
    }
    for (const k of offsetKeys) g.offsets.delete(k);
    if (whole && this.groups.get(g.groupId) === g) this.groups.delete(g.groupId);
  }

  summarize(groupId: string): GroupSummary {
    const owner = this.ownership(groupId);
    if (owner) throw new MqError(owner.code, owner.message);
    const g = this.groups.get(groupId);
    if (!g || g.state === 'Dead') throw new MqError('GROUP_ID_NOT_FOUND', `group "${groupId}" does not exist`);
    const owners = new Map<string, string>();
    const members = [...g.members.values()].map((m) => {
      const assignment = g.protocolType === 'consumer' ? decodeAssignment(m.assignment) : [];
      for (const tp of assignment) for (const p of tp.partitions) owners.set(offsetKey(tp.topic, p), m.memberId);
      return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost, assignment };
    });
    const keys = new Set([...g.offsets.keys(), ...owners.keys()]);
    const offsets = [...keys]
      .map((k) => {
        const { topic, partition } = splitOffsetKey(k);
        const c = g.offsets.get(k);
        const end = this.topics.logEndOffset(topic, partition) ?? null;
        const committed = c?.offset ?? -1;
        return {
          topic,
          partition,
          committedOffset: committed,
          logEndOffset: end,
          lag: end === null || committed < 0 ? null : Math.max(0, end - committed),
          metadata: c?.metadata ?? '',
          owner: owners.get(k) ?? null,
        };
      })
      .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    return {
      groupId,
      state: g.state,
      protocolType: g.protocolType ?? '',
      protocol: g.protocolName ?? '',
      generationId: g.generationId,
      leader: g.leaderId ?? '',
      members,
      offsets,
    };
  }

  // ---------------------------------------------------------------- creation limits

  /**
   * Whether a request may create a new group: below groupCreateLimit (the
   * groups above it, up to maxGroups, are a reserve for existing groups loaded
   * from the log) and within its connection's rate. Takes a token when it may.
   */
  private admitNewGroup(groupId: string, ctx: RequestContext | undefined): { code: ErrorCode; message: string } | null {
    const { groupCreateLimit, groupCreateRatePerConnection: rate, groupCreateBurstPerConnection: burst } = this.options;
    if (this.groups.size >= groupCreateLimit) {
      return {
        code: 'GROUP_LIMIT_REACHED',
        message: `group "${groupId}" was not created: this coordinator holds ${this.groups.size} groups (limit for new groups ${groupCreateLimit}); existing groups are served`,
      };
    }
    const connectionId = ctx?.connectionId;
    if (connectionId === undefined) return null;
    const now = this.clock();
    const b = this.createBuckets.get(connectionId) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) * rate) / 1000);
    b.at = now;
    this.createBuckets.set(connectionId, b);
    if (b.tokens < 1) {
      return {
        code: 'GROUP_CREATE_THROTTLED',
        message: `group "${groupId}" was not created: this connection creates groups faster than ${rate} per second; retry later`,
      };
    }
    b.tokens -= 1;
    return null;
  }

  // ---------------------------------------------------------------- expiry

  private scheduleEmptyExpiry() {
    this.emptyExpiryTimer = this.timers.setTimeout(() => {
      this.expireEmptyGroups()
        .catch((e) => this.logger.error({ err: e }, 'empty group expiry failed'))
        .finally(() => {
          if (!this.closed) this.scheduleEmptyExpiry();
        });
    }, this.options.groupEmptyRetentionMs);
  }

  async expireEmptyGroups(): Promise<number> {
    const now = this.clock();
    const { groupEmptyRetentionMs: retention, groupCreateRatePerConnection: rate, groupCreateBurstPerConnection: burst } = this.options;
    // A bucket idle long enough to be full again is the same as no bucket.
    for (const [id, b] of this.createBuckets) if (b.tokens + ((now - b.at) * rate) / 1000 >= burst) this.createBuckets.delete(id);
    let removed = 0;
    let tombstoned = 0;
    for (const g of [...this.groups.values()]) {
      if (!this.isExpiredEmpty(g, now, retention)) continue;
      if (!g.stored) {
        this.groups.delete(g.groupId); // never written: nothing to tombstone
        removed++;
        continue;
      }
      try {
        await this.removeGroup(g, []);
        removed++;
        tombstoned++;
      } catch (e) {
        this.logger.warn({ group: g.groupId, err: e }, 'could not remove the empty group');
      }
    }
    if (removed > 0) this.logger.info({ groups: removed, tombstoned, retentionMs: retention }, 'empty groups without offsets expired');
    return removed;
  }

  private isExpiredEmpty(g: Group, now: number, retention: number): boolean {
    return (
      g.state === 'Empty' &&
      !g.hasActiveMembers() &&
      g.pendingWrites === 0 &&
      g.offsets.size === 0 &&
      now - g.stateTimestamp >= retention &&
      this.groups.get(g.groupId) === g
    );
  }

  private scheduleExpiry() {
    this.expiryTimer = this.timers.setTimeout(() => {
      this.expireOffsets()
        .catch((e) => this.logger.error({ err: e }, 'offsets expiry failed'))
        .finally(() => {
          if (!this.closed) this.scheduleExpiry();
        });
    }, this.options.offsetsRetentionCheckIntervalMs);
  }

  async removeTopicOffsets(topics: ReadonlySet<string>, deletedAt: number): Promise<number> {
    let removed = 0;
    for (const g of [...this.groups.values()]) {
      if (g.state === 'Dead') continue;
      const keys = [...g.offsets].filter(([k, c]) => c.commitTimestamp <= deletedAt && topics.has(splitOffsetKey(k).topic)).map(([k]) => k);
      if (keys.length === 0) continue;
      try {
        await this.removeGroup(g, keys);
        removed += keys.length;
        this.logger.info({ group: g.groupId, offsets: keys.length }, 'offsets of deleted topics removed');
      } catch (e) {
        this.logger.warn({ group: g.groupId, err: e }, 'could not remove the offsets of deleted topics');
      }
    }
    return removed;
  }

  /**
   * Tombstones, in the groups of one loaded offsets partition, the offsets of topics that no longer exist, or that
   * exist as another incarnation than the one committed to (its topic id differs: deleted and created again). A
   * commit is only accepted for an existing topic, so a missing one was deleted; this broker's metadata is caught up
   * before it leads an offsets partition (leaderships are applied only then, in metadata order).
   */
  private async removeOffsetsOfGoneTopics(partition: number): Promise<number> {
    let removed = 0;
    for (const g of [...this.groups.values()]) {
      if (g.partition !== partition || g.state === 'Dead') continue;
      const keys: string[] = [];
      const topics = new Set<string>();
      for (const [k, c] of g.offsets) {
        const { topic } = splitOffsetKey(k);
        const gone = this.topics.partitionCount(topic) === undefined;
        const current = gone ? undefined : this.topics.topicId?.(topic);
        if (gone || (c.topicId !== undefined && current !== undefined && c.topicId !== current)) {
          keys.push(k);
          topics.add(topic);
        }
      }
      if (keys.length === 0) continue;
      await this.removeGroup(g, keys);
      removed += keys.length;
      this.logger.info({ group: g.groupId, offsets: keys.length, topics: [...topics].slice(0, 10).map(shown) }, 'offsets of topics deleted while unwatched removed');
    }
    return removed;
  }

  async expireOffsets(): Promise<number> {
    const now = this.clock();
    const retention = this.options.offsetsRetentionMs;
    let expired = 0;
    for (const g of [...this.groups.values()]) {
      if (g.state !== 'Empty' || g.hasActiveMembers() || g.pendingWrites > 0) continue;
      let keys: string[];
      if (g.protocolType !== null) {
        // A consumer group: everything expires once it has been empty long enough.
        keys = now - g.stateTimestamp >= retention ? [...g.offsets.keys()] : [];
      } else {
        // Offsets committed from outside any group expire one by one.
        keys = [...g.offsets].filter(([, c]) => now - c.commitTimestamp >= retention).map(([k]) => k);
      }
      if (keys.length === 0) continue; // empty groups without offsets: expireEmptyGroups
      try {
        await this.removeGroup(g, keys);
        expired += keys.length;
        if (keys.length > 0) this.logger.info({ group: g.groupId, offsets: keys.length }, 'offsets expired');
      } catch (e) {
        this.logger.warn({ group: g.groupId, err: e }, 'could not expire offsets');
      }
    }
    return expired;
  }

  // ---------------------------------------------------------------- persistence

  /**
   * Offset commits to one partition of the offsets log are coalesced: while
   * one append is in flight, the commits that arrive wait and then go out
   * together as one record batch (bounded in bytes). Each resolves with the
   * log offset of its first record once the shared batch is durable; if the
   * append fails, every commit in it fails and nothing is applied.
   */
  private appendCommit(partition: number, records: RecordInput[]): Promise<number> {
    let q = this.commitQueues.get(partition);
    if (!q) this.commitQueues.set(partition, (q = { waiting: [], busy: false }));
    const queue = q;
    return new Promise<number>((resolve, reject) => {
      queue.waiting.push({ records, resolve, reject });
      if (!queue.busy) void this.drainCommits(partition, queue);
    });
  }

  private async drainCommits(partition: number, q: CommitQueue): Promise<void> {
    q.busy = true;
    try {
      while (q.waiting.length > 0) {
        const batch: CommitQueue['waiting'] = [];
        let bytes = 0;
        while (q.waiting.length > 0 && (batch.length === 0 || bytes < COALESCE_MAX_BYTES)) {
          const next = q.waiting.shift()!;
          for (const r of next.records) bytes += (r.key as Buffer).length + ((r.value as Buffer | null)?.length ?? 0) + 32;
          batch.push(next);
        }
        try {
          const all = batch.flatMap((b) => b.records);
          const { baseOffset } = await this.log.append(partition, encodeBatchSync(all, { now: this.clock() }));
          let offset = baseOffset;
          for (const b of batch) {
            b.resolve(offset);
            offset += b.records.length;
          }
        } catch (e) {
          for (const b of batch) b.reject(e);
        }
      }
    } finally {
      q.busy = false;
    }
  }

  /** Async: a value the schema cannot hold is a rejected store (logged by the caller), never a throw into a timer. */
  private async storeGroup(group: Group): Promise<unknown> {
    const value: GroupValue = {
      protocolType: group.protocolType,
      generationId: group.generationId,
      protocolName: group.protocolName,
      leaderId: group.leaderId,
      stateTimestamp: group.stateTimestamp,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        sessionTimeoutMs: m.sessionTimeoutMs,
        subscription: group.metadataOf(m),
        assignment: m.assignment,
      })),
    };
    const record = { key: encodeKey({ type: 'group', group: group.groupId }), value: encodeGroupValue(value) };
    group.stored = true;
    return this.log.append(group.partition, encodeBatchSync([record], { now: this.clock() }));
  }
}

/** About how many bytes a group's description takes on the wire (its members' ids, subscriptions and assignments). */
function describedBytes(g: Group): number {
  let n = 64 + g.groupId.length;
  for (const m of g.members.values()) {
    n += 32 + m.memberId.length + (m.groupInstanceId?.length ?? 0) + m.clientId.length + m.clientHost.length + m.assignment.length;
    n += g.metadataOf(m).length;
  }
  return n;
}

/** Largest coalesced commit batch (well under the log's default 1 MiB batch limit). */
const COALESCE_MAX_BYTES = 256 * 1024;

interface CommitQueue {
  waiting: Array<{ records: RecordInput[]; resolve: (baseOffset: number) => void; reject: (err: unknown) => void }>;
  busy: boolean;
}

interface Joining {
  instanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  ctx: RequestContext;
}

function updateMember(member: Member, j: Joining) {
  member.sessionTimeoutMs = j.sessionTimeoutMs;
  member.rebalanceTimeoutMs = j.rebalanceTimeoutMs;
  member.protocols = j.protocols;
  member.clientId = j.ctx.clientId;
  member.clientHost = j.ctx.clientHost;
}

function sameProtocols(a: readonly Protocol[], b: readonly Protocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

/** Whether a member's new protocols keep the group's selected protocol with the same subscribed topics. */
function sameSubscription(group: Group, before: readonly Protocol[], after: readonly Protocol[]): boolean {
  const name = group.protocolName;
  const a = before.find((p) => p.name === name);
  const b = after.find((p) => p.name === name);
  if (!a || !b) return false;
  if (group.protocolType !== 'consumer') return a.metadata.equals(b.metadata);
  try {
    const ta = [...mq.ConsumerSubscription.decode(a.metadata).topics].sort().join('\u0000');
    const tb = [...mq.ConsumerSubscription.decode(b.metadata).topics].sort().join('\u0000');
    return ta === tb;
  } catch {
    return false;
  }
}

function decodeAssignment(buf: Buffer): Array<{ topic: string; partitions: number[] }> {
  if (buf.length === 0) return [];
  try {
    return mq.ConsumerAssignment.decode(buf).assignedPartitions.map((tp) => ({
      topic: tp.topic ?? '',
      partitions: [...(tp.partitions ?? [])].sort((x, y) => x - y),
    }));
  } catch {
    return [];
  }
}

/** Whether a state name (any case) is one of the group states. */
export function isGroupState(s: string): s is GroupState {
  return (GROUP_STATES as readonly string[]).includes(s);
}
