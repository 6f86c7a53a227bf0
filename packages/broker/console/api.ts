/** The broker's HTTP API, as the console uses it (same origin: the page is served by the broker). */

export interface BrokerInfo {
  id: number;
  host: string;
  port: number;
  httpPort: number;
  rack: string;
  fenced: boolean;
  lastSeenMsAgo: number;
}

export interface PartitionRef {
  topic: string;
  partition: number;
  replicas: number[];
  isr: number[];
}

export interface HostedReplica {
  topic: string;
  partition: number;
  role: string;
  leaderEpoch: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  sizeBytes?: number;
}

export interface ClusterView {
  brokerId: number;
  controllerId: number;
  activeController: boolean;
  voters: number[];
  raft: { term: number; commit: number; applied: number };
  brokers: BrokerInfo[];
  topics: number;
  partitions: number;
  underReplicated: PartitionRef[];
  offline: PartitionRef[];
  hosted: HostedReplica[];
}

export interface TopicSummary {
  name: string;
  partition_count: number;
  replication_factor: number;
}

export interface TopicPartition {
  partition: number;
  leader: number;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
  low: number | null;
  high: number | null;
}

export interface TopicDetail extends TopicSummary {
  topic_id: string;
  configs: Record<string, string>;
  partitions: TopicPartition[];
}

export interface GroupSummary {
  group: string;
  state: string;
  protocol_type?: string;
}

export interface GroupOffset {
  topic: string;
  partition: number;
  committed_offset: number;
  log_end_offset: number | null;
  lag: number | null;
  owner: string | null;
}

export interface GroupMember {
  member_id: string;
  group_instance_id: string | null;
  client_id: string;
  client_host: string;
  assignment: Array<{ topic: string; partitions: number[] }>;
}

export interface GroupDetail extends GroupSummary {
  protocol: string;
  generation: number;
  leader: string;
  members: GroupMember[];
  offsets: GroupOffset[];
  total_lag: number;
}

/** An error answer of the API: its code and message, shown as they are. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text for the message
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string }; code?: string; message?: string } | null) ?? {};
    const code = e.error?.code ?? e.code ?? `HTTP_${res.status}`;
    throw new ApiError(res.status, code, e.error?.message ?? e.message ?? text);
  }
  return json as T;
}

const enc = encodeURIComponent;

/** GET /log-dirs: each live broker's replicas and their size on its disk. */
export interface LogDirsView {
  brokers: Array<{
    broker: number;
    log_dir?: string;
    replicas?: Array<{ topic: string; partition: number; size_bytes: number; offset_lag: number; leader: boolean; bytes_in_per_sec?: number }>;
    error?: { code: string; message: string };
  }>;
}

/** GET /console/session: how the live tail reaches this broker's client listener. */
export interface ConsoleSession {
  port: number;
  tls: boolean;
  authentication: boolean;
}

export const api = {
  session: () => call<ConsoleSession>('GET', '/console/session'),
  /** A bearer token for the console's user (the browser sends the Basic credentials it asked for): the tail's login. */
  token: () => call<{ token: string }>('POST', '/tokens'),
  cluster: () => call<ClusterView>('GET', '/cluster'),
  logDirs: (topic: string) => call<LogDirsView>('GET', `/log-dirs?topic=${enc(topic)}`),
  topics: () => call<TopicSummary[]>('GET', '/topics'),
  topic: (name: string) => call<TopicDetail>('GET', `/topics/${enc(name)}`),
  createTopic: (name: string, partitions: number, replicationFactor: number) =>
    call<unknown>('POST', '/topics', { name, partition_count: partitions, replication_factor: replicationFactor }),
  produce: (topic: string, record: { key?: string; value: string; headers?: Record<string, string>; partition?: number }) =>
    call<Array<{ partition: number; offset: number }>>('POST', `/topics/${enc(topic)}/records`, { records: [record] }),
  groups: () => call<GroupSummary[]>('GET', '/groups'),
  group: (id: string) => call<GroupDetail>('GET', `/groups/${enc(id)}`),
  resetOffsets: (id: string, offsets: Array<{ topic: string; partition: number; offset: number }>) =>
    call<unknown>('POST', `/groups/${enc(id)}/offsets`, { offsets }),
};
