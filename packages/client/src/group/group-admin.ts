/**
 * Administration of consumer groups: list, describe (members, assignment,
 * committed offset, log end and lag per partition), delete, and offset
 * resets from outside the group (refused while it has active members).
 */
import { MqError, errorCodeFromNumber, type ErrorCode } from '@mq/protocol/errors';
import { Admin } from '../admin.js';
import type { Cluster } from '../cluster.js';
import { CONSUMER_PROTOCOL_TYPE, compareTp, decodeAssignment, tpKey } from './consumer-protocol.js';
import { CoordinatorClient, type TopicPartitionOffsetAndMetadata } from './coordinator-client.js';
import type { TopicPartition } from './types.js';

export interface ListedGroup {
  groupId: string;
  state: string;
  protocolType: string;
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  assignment: TopicPartition[];
}

export interface GroupPartitionLag {
  topic: string;
  partition: number;
  /** -1 when the group has not committed for the partition. */
  committedOffset: number;
  logEndOffset: number | null;
  /** null when there is no committed offset (or the log end is unknown). */
  lag: number | null;
  /** The member that owns the partition now, if any. */
  owner: string | null;
  metadata: string;
}

export interface GroupDescription {
  groupId: string;
  state: string;
  protocolType: string;
  protocol: string;
  generationId: number;
  leader: string;
  members: GroupMemberDescription[];
  offsets: GroupPartitionLag[];
  totalLag: number;
}

/**
 * Where `resetOffsets` moves a group's offsets: the log start, the log end, an
 * offset, the first record at or after a time (ms), or the committed offset
 * moved by `shiftBy` (negative: back). Results are clamped to the log range.
 */
export type ResetSpec = 'earliest' | 'latest' | { offset: number } | { datetime: number } | { shiftBy: number };

export interface ResetResult {
  topic: string;
  partition: number;
  previousOffset: number;
  offset: number;
}

function fail(code: ErrorCode, message: string, extra: Record<string, unknown> = {}): never {
  throw new MqError(code, message, extra);
}

export class GroupAdmin {
  private readonly admin: Admin;

  constructor(private readonly cluster: Cluster) {
    this.admin = new Admin(cluster);
  }

  private coordinator(groupId: string): CoordinatorClient {
    return new CoordinatorClient(this.cluster, groupId);
  }

  /** Groups of every live broker (each lists those it coordinates). */
  async listGroups(options: { states?: string[]; signal?: AbortSignal } = {}): Promise<ListedGroup[]> {
    await this.cluster.refreshMetadata([], options.signal);
    // A fenced broker (down, or cut off from the controller) leads no __consumer_offsets partition, so it coordinates no group.
    const ids = [...this.cluster.brokers.values()].filter((b) => !b.fenced).map((b) => b.id);
    const results = await Promise.all(
      ids.map((id) => this.cluster.send({ kind: 'broker', id }, 'listGroups', { statesFilter: options.states ?? [] }, { signal: options.signal })),
    );
    const out = new Map<string, ListedGroup>();
    for (const r of results) {
      const code = errorCodeFromNumber(r.errorCode ?? 0);
      if (code !== 'NONE') fail(code, `listing groups failed: ${code}`);
      for (const g of r.groups ?? []) out.set(g.groupId ?? '', { groupId: g.groupId ?? '', state: g.state ?? '', protocolType: g.protocolType ?? '' });
    }
    return [...out.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  /** Members, assignments, committed offsets, log ends and lag; GROUP_ID_NOT_FOUND for an unknown group. */
  async describeGroup(groupId: string, options: { signal?: AbortSignal } = {}): Promise<GroupDescription> {
    const coord = this.coordinator(groupId);
    const r = await coord.request('describeGroups', { groupIds: [groupId] }, (x) => errorCodeFromNumber(x.groups?.[0]?.errorCode ?? 0), options.signal);
    const g = r.groups?.[0];
    if (!g) fail('UNKNOWN', `no description of group "${groupId}" in the response`);
    const code = errorCodeFromNumber(g.errorCode ?? 0);
    if (code !== 'NONE') fail(code, g.errorMessage || `describing group "${groupId}" failed: ${code}`, { groupId });
    const members: GroupMemberDescription[] = (g.members ?? []).map((m) => ({
      memberId: m.memberId ?? '',
      groupInstanceId: m.groupInstanceId || null,
      clientId: m.clientId ?? '',
      clientHost: m.clientHost ?? '',
      assignment: g.protocolType === CONSUMER_PROTOCOL_TYPE && m.assignment?.length ? decodeAssignment(m.assignment).sort(compareTp) : [],
    }));
    const owners = new Map<string, string>();
    for (const m of members) for (const tp of m.assignment) owners.set(tpKey(tp), m.memberId);
    const committed = await coord.committed(undefined, options.signal);
    const rows = new Map<string, GroupPartitionLag>();
    for (const c of committed) {
      rows.set(tpKey(c), { topic: c.topic, partition: c.partition, committedOffset: c.offset, logEndOffset: null, lag: null, owner: null, metadata: c.metadata });
    }
    for (const m of members) {
      for (const tp of m.assignment) {
        if (!rows.has(tpKey(tp))) rows.set(tpKey(tp), { ...tp, committedOffset: -1, logEndOffset: null, lag: null, owner: null, metadata: '' });
      }
    }
    const byTopic = new Map<string, GroupPartitionLag[]>();
    for (const row of rows.values()) {
      row.owner = owners.get(tpKey(row)) ?? null;
      let list = byTopic.get(row.topic);
      if (!list) byTopic.set(row.topic, (list = []));
      list.push(row);
    }
    await Promise.all(
      [...byTopic].map(async ([topic, list]) => {
        try {
          const ends = await this.admin.listOffsets(topic, list.map((x) => ({ partition: x.partition, spec: 'latest' as const })), options);
          const end = new Map(ends.map((e) => [e.partition, e.high]));
          for (const row of list) {
            row.logEndOffset = end.get(row.partition) ?? null;
            row.lag = row.logEndOffset === null || row.committedOffset < 0 ? null : Math.max(0, row.logEndOffset - row.committedOffset);
          }
        } catch {
          // A deleted topic: its offsets stay in the group; log end and lag are unknown.
        }
      }),
    );
    const offsets = [...rows.values()].sort(compareTp);
    return {
      groupId,
      state: g.state ?? '',
      protocolType: g.protocolType ?? '',
      protocol: g.protocol ?? '',
      generationId: g.generationId ?? 0,
      leader: g.leader ?? '',
      members,
      offsets,
      totalLag: offsets.reduce((n, o) => n + (o.lag ?? 0), 0),
    };
  }

  /** Deletes empty groups and their offsets; NON_EMPTY_GROUP while members are active. */
  async deleteGroup(groupId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const r = await this.coordinator(groupId).request('deleteGroups', { groupIds: [groupId] }, (x) => errorCodeFromNumber(x.results?.[0]?.errorCode ?? 0), options.signal);
    const res = r.results?.[0];
    const code = errorCodeFromNumber(res?.errorCode ?? 0);
    if (code !== 'NONE') fail(code, res?.errorMessage || `deleting group "${groupId}" failed: ${code}`, { groupId });
  }

  /** Commits offsets for a group from outside it (only while it has no active members). */
  async commitOffsets(groupId: string, offsets: readonly TopicPartitionOffsetAndMetadata[], options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.coordinator(groupId).commit(offsets, null, options.signal);
  }

  /**
   * Moves a group's committed offsets on a topic (all partitions, or the
   * given ones) to the earliest or latest offset, an offset (clamped to the
   * log's range) or the first offset at or after a time. Refused with
   * NON_EMPTY_GROUP while the group has active members. `dryRun` computes
   * without committing.
   */
  async resetOffsets(
    groupId: string,
    topic: string,
    to: ResetSpec,
    options: { partitions?: number[]; dryRun?: boolean; signal?: AbortSignal } = {},
  ): Promise<ResetResult[]> {
    let state = 'Dead';
    let members = 0;
    try {
      const d = await this.describeGroup(groupId, options);
      state = d.state;
      members = d.members.length;
    } catch (err) {
      if (!(err instanceof MqError && err.code === 'GROUP_ID_NOT_FOUND')) throw err;
    }
    if (members > 0 || (state !== 'Empty' && state !== 'Dead')) {
      fail('NON_EMPTY_GROUP', `group "${groupId}" has ${members} active member(s) (state ${state}); stop its consumers before resetting offsets`, { groupId });
    }
    const meta = await this.cluster.topic(topic, options.signal);
    const partitions = options.partitions ?? meta.partitions.map((p) => p.partition);
    for (const p of partitions) {
      if (!meta.partitions.some((x) => x.partition === p)) {
        fail('UNKNOWN_TOPIC_OR_PARTITION', `partition ${p} of topic "${topic}" does not exist (it has ${meta.partitions.length})`);
      }
    }
    const spec = typeof to === 'string' ? to : 'datetime' in to ? to.datetime : 'latest';
    if (typeof to === 'object' && 'offset' in to && (!Number.isSafeInteger(to.offset) || to.offset < 0)) {
      fail('INVALID_ARGUMENT', `--to-offset must be an integer >= 0, got ${to.offset}`);
    }
    if (typeof to === 'object' && 'shiftBy' in to && !Number.isSafeInteger(to.shiftBy)) fail('INVALID_ARGUMENT', `--shift-by must be an integer, got ${to.shiftBy}`);
    if (typeof to === 'object' && 'datetime' in to && !Number.isFinite(to.datetime)) fail('INVALID_ARGUMENT', 'the date-time is not valid');
    const listed = await this.admin.listOffsets(topic, partitions.map((partition) => ({ partition, spec })), options);
    const before = new Map(
      (await this.coordinator(groupId).committed(partitions.map((partition) => ({ topic, partition })), options.signal)).map((c) => [c.partition, c.offset]),
    );
    if (typeof to === 'object' && 'shiftBy' in to) {
      const missing = partitions.filter((p) => (before.get(p) ?? -1) < 0);
      if (missing.length > 0) {
        fail('INVALID_ARGUMENT', `group "${groupId}" has no committed offset on ${missing.map((p) => `${topic}-${p}`).join(', ')} to shift; reset those with --to-earliest, --to-latest or --to-offset first`, { groupId });
      }
    }
    const results: ResetResult[] = listed
      .map((l) => {
        let offset: number;
        if (typeof to === 'object' && 'offset' in to) offset = Math.min(Math.max(to.offset, l.low), l.high);
        else if (typeof to === 'object' && 'shiftBy' in to) offset = Math.min(Math.max(before.get(l.partition)! + to.shiftBy, l.low), l.high);
        else if (typeof to === 'object') offset = l.offset < 0 ? l.high : l.offset;
        else offset = to === 'earliest' ? l.low : l.high;
        return { topic, partition: l.partition, previousOffset: before.get(l.partition) ?? -1, offset };
      })
      .sort((a, b) => a.partition - b.partition);
    if (!options.dryRun) await this.commitOffsets(groupId, results, options);
    return results;
  }
}
