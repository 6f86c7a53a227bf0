/**
 * The mq web console, served by every broker's HTTP port at /console: the cluster (brokers, controller,
 * partitions under-replicated and offline), topics (partitions, leaders, replicas, ISR, watermarks, the size
 * of each replica on its broker's disk from GET /log-dirs, produce rate), groups (state, members, assignment, lag per partition and over time), a live
 * tail of a topic through the browser client, a produce form, and two admin actions (create a topic, reset
 * a group's offsets) through the same HTTP API as every other client.
 */
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type GroupDetail, type GroupSummary, type TopicDetail, type TopicSummary } from './api';
import { bytes, count, rate, showBytes, type ViewMode } from './format';
import { LagChart, type LagSample } from './lag-chart';
import { startTail, type Tail, type TailRecord } from './tail';

const REFRESH_MS = 2000;

/** An API error as the page shows it: its code and message. */
function errorText(err: unknown): string {
  return err instanceof ApiError ? `${err.code}: ${err.message}` : (err as Error).message;
}

function useRoute(): string {
  const [route, setRoute] = useState(location.hash.replace(/^#/, '') || '/');
  useEffect(() => {
    const on = () => setRoute(location.hash.replace(/^#/, '') || '/');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** Calls `load` now and every REFRESH_MS; returns the latest value or error. */
function usePoll<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: string | null; at: number } {
  const [state, setState] = useState<{ data: T | null; error: string | null; at: number }>({ data: null, error: null, at: 0 });
  useEffect(() => {
    let live = true;
    const tick = async () => {
      try {
        const data = await load();
        if (live) setState({ data, error: null, at: Date.now() });
      } catch (err) {
        if (live) setState((s) => ({ ...s, error: errorText(err) }));
      }
    };
    void tick();
    const timer = setInterval(tick, REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, deps);
  return state;
}

function ErrorLine({ error }: { error: string | null }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

function Ids({ ids }: { ids: number[] }) {
  return <span>{ids.join(', ')}</span>;
}

// ------------------------------------------------------------------ cluster

function ClusterPage() {
  const { data: c, error } = usePoll(api.cluster, []);
  return (
    <section id="cluster">
      <h2>Cluster</h2>
      <ErrorLine error={error} />
      {c && (
        <>
          <dl class="facts">
            <dt>controller</dt>
            <dd data-testid="controller">broker {c.controllerId}</dd>
            <dt>voters</dt>
            <dd>
              <Ids ids={c.voters} />
            </dd>
            <dt>raft</dt>
            <dd>
              term {c.raft.term}, commit {count(c.raft.commit)}
            </dd>
            <dt>topics</dt>
            <dd data-testid="topic-count">{c.topics}</dd>
            <dt>partitions</dt>
            <dd>{c.partitions}</dd>
            <dt>under-replicated</dt>
            <dd data-testid="under-replicated" class={c.underReplicated.length ? 'bad' : 'good'}>
              {c.underReplicated.length}
            </dd>
            <dt>offline</dt>
            <dd data-testid="offline" class={c.offline.length ? 'bad' : 'good'}>
              {c.offline.length}
            </dd>
          </dl>
          <h3>Brokers</h3>
          <table data-testid="brokers">
            <thead>
              <tr>
                <th>id</th>
                <th>address</th>
                <th>HTTP</th>
                <th>rack</th>
                <th>state</th>
                <th>role</th>
                <th>last seen</th>
              </tr>
            </thead>
            <tbody>
              {c.brokers.map((b) => (
                <tr key={b.id} data-broker={b.id}>
                  <td>{b.id}</td>
                  <td>
                    {b.host}:{b.port}
                  </td>
                  <td>{b.httpPort}</td>
                  <td>{b.rack || '–'}</td>
                  <td class={b.fenced ? 'bad' : 'good'}>{b.fenced ? 'fenced' : 'alive'}</td>
                  <td>{[b.id === c.controllerId ? 'controller' : null, c.voters.includes(b.id) ? 'voter' : null, 'broker'].filter(Boolean).join(', ')}</td>
                  <td>{b.lastSeenMsAgo < 0 ? '–' : `${b.lastSeenMsAgo} ms ago`}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {(c.underReplicated.length > 0 || c.offline.length > 0) && (
            <>
              <h3>Partitions needing attention</h3>
              <table>
                <thead>
                  <tr>
                    <th>partition</th>
                    <th>state</th>
                    <th>replicas</th>
                    <th>ISR</th>
                  </tr>
                </thead>
                <tbody>
                  {[...c.offline.map((p) => ({ ...p, state: 'offline' })), ...c.underReplicated.map((p) => ({ ...p, state: 'under-replicated' }))].map((p) => (
                    <tr key={`${p.topic}-${p.partition}`}>
                      <td>
                        <a href={`#/topics/${encodeURIComponent(p.topic)}`}>{p.topic}</a>/{p.partition}
                      </td>
                      <td class="bad">{p.state}</td>
                      <td>
                        <Ids ids={p.replicas} />
                      </td>
                      <td>
                        <Ids ids={p.isr} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </>
      )}
    </section>
  );
}

// ------------------------------------------------------------------- topics

function TopicsPage() {
  const { data: topics, error } = usePoll(api.topics, []);
  const [name, setName] = useState('');
  const [partitions, setPartitions] = useState('3');
  const [rf, setRf] = useState('1');
  const [result, setResult] = useState<string | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      await api.createTopic(name.trim(), Number(partitions), Number(rf));
      setResult(`created ${name.trim()}`);
      setName('');
    } catch (err) {
      setResult(errorText(err));
    }
  };
  return (
    <section id="topics">
      <h2>Topics</h2>
      <ErrorLine error={error} />
      <table data-testid="topics">
        <thead>
          <tr>
            <th>topic</th>
            <th>partitions</th>
            <th>replication factor</th>
          </tr>
        </thead>
        <tbody>
          {(topics ?? []).map((t: TopicSummary) => (
            <tr key={t.name} data-topic={t.name}>
              <td>
                <a href={`#/topics/${encodeURIComponent(t.name)}`}>{t.name}</a>
              </td>
              <td>{t.partition_count}</td>
              <td>{t.replication_factor}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="inline" onSubmit={create} data-testid="create-topic">
        <h3>Create a topic</h3>
        <input name="name" placeholder="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required />
        <label>
          partitions <input name="partitions" type="number" min="1" value={partitions} onInput={(e) => setPartitions((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          replication factor <input name="rf" type="number" min="1" value={rf} onInput={(e) => setRf((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create</button>
        {result && <span class="result">{result}</span>}
      </form>
    </section>
  );
}

function TopicPage({ name }: { name: string }) {
  const samples = useRef(new Map<number, { at: number; high: number }>());
  const [rates, setRates] = useState<Record<number, number | null>>({});
  // Per partition: the size of each broker's replica (from every live broker's DescribeLogDirs), the leader's first.
  const [sizes, setSizes] = useState<Record<number, Array<{ broker: number; bytes: number; leader: boolean; bytesIn: number }>>>({});
  const load = useCallback(async () => {
    const [t, dirs] = await Promise.all([api.topic(name), api.logDirs(name).catch(() => null)]);
    const now = Date.now();
    const next: Record<number, number | null> = {};
    for (const p of t.partitions) {
      if (p.high === null) continue;
      const cur = { at: now, high: p.high };
      next[p.partition] = rate(samples.current.get(p.partition), cur);
      samples.current.set(p.partition, cur);
    }
    setRates(next);
    const s: Record<number, Array<{ broker: number; bytes: number; leader: boolean; bytesIn: number }>> = {};
    for (const b of dirs?.brokers ?? []) {
      for (const r of b.replicas ?? []) if (r.topic === name) (s[r.partition] ??= []).push({ broker: b.broker, bytes: r.size_bytes, leader: r.leader, bytesIn: r.bytes_in_per_sec ?? 0 });
    }
    for (const list of Object.values(s)) list.sort((x, y) => Number(y.leader) - Number(x.leader) || x.broker - y.broker);
    setSizes(s);
    return { topic: t };
  }, [name]);
  const { data, error } = usePoll(load, [name]);
  const t: TopicDetail | undefined = data?.topic;
  const total = Object.values(rates).reduce<number>((a, r) => a + (r ?? 0), 0);
  return (
    <section id="topic">
      <h2>
        <a href="#/topics">Topics</a> / <span data-testid="topic-name">{name}</span>
      </h2>
      <ErrorLine error={error} />
      {t && (
        <>
          <p>
            {t.partition_count} partitions, replication factor {t.replication_factor}, produce rate <span data-testid="produce-rate">{total.toFixed(1)}</span> records/s
          </p>
          <table data-testid="partitions">
            <thead>
              <tr>
                <th>partition</th>
                <th>leader</th>
                <th>epoch</th>
                <th>replicas</th>
                <th>ISR</th>
                <th>low</th>
                <th>high</th>
                <th>size (leader)</th>
                <th>replica sizes</th>
                <th>records/s</th>
                <th>bytes/s (leader, 10 s)</th>
              </tr>
            </thead>
            <tbody>
              {t.partitions.map((p) => (
                <tr key={p.partition} data-partition={p.partition}>
                  <td>{p.partition}</td>
                  <td class={p.leader < 0 ? 'bad' : ''}>{p.leader < 0 ? 'none' : p.leader}</td>
                  <td>{p.leader_epoch}</td>
                  <td>
                    <Ids ids={p.replicas} />
                  </td>
                  <td class={p.isr.length < p.replicas.length ? 'bad' : ''}>
                    <Ids ids={p.isr} />
                  </td>
                  <td data-field="low">{count(p.low)}</td>
                  <td data-field="high">{count(p.high)}</td>
                  <td data-field="size">{bytes(sizes[p.partition]?.find((r) => r.leader)?.bytes)}</td>
                  <td data-field="replica-sizes">{(sizes[p.partition] ?? []).map((r) => `${r.broker}: ${bytes(r.bytes)}`).join(' · ') || '–'}</td>
                  <td>{rates[p.partition] == null ? '–' : rates[p.partition]!.toFixed(1)}</td>
                  <td data-field="bytes-in">{bytes(sizes[p.partition]?.find((r) => r.leader)?.bytesIn)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ProduceForm topic={name} />
          <TailView topic={t} />
        </>
      )}
    </section>
  );
}

function ProduceForm({ topic }: { topic: string }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [headers, setHeaders] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const send = async (e: Event) => {
    e.preventDefault();
    const h: Record<string, string> = {};
    for (const pair of headers.split(',').map((s) => s.trim()).filter(Boolean)) {
      const i = pair.indexOf('=');
      if (i > 0) h[pair.slice(0, i)] = pair.slice(i + 1);
    }
    try {
      const [ack] = await api.produce(topic, { ...(key ? { key } : {}), value, ...(Object.keys(h).length ? { headers: h } : {}) });
      setResult(`stored at partition ${ack!.partition}, offset ${ack!.offset}`);
    } catch (err) {
      setResult(errorText(err));
    }
  };
  return (
    <form class="inline" onSubmit={send} data-testid="produce">
      <h3>Produce a record</h3>
      <input name="key" placeholder="key (optional)" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
      <input name="value" placeholder="value" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} required />
      <input name="headers" placeholder="headers: a=1, b=2" value={headers} onInput={(e) => setHeaders((e.target as HTMLInputElement).value)} />
      <button type="submit">Send</button>
      {result && <span class="result" data-testid="produce-result">{result}</span>}
    </form>
  );
}

const TAIL_MAX = 200;

function TailView({ topic }: { topic: TopicDetail }) {
  const [on, setOn] = useState(true);
  const [mode, setMode] = useState<ViewMode>('text');
  const [records, setRecords] = useState<TailRecord[]>([]);
  const [error, setError] = useState<string | null>(null);
  const session = useSession();
  const partitionsKey = topic.partitions.length;
  useEffect(() => {
    if (!on || !session) return;
    setRecords([]);
    const tail: Tail = startTail(
      session.bootstrap,
      // With authentication the tail logs in as the console's user: a token from POST /tokens (never in a URL or log).
      session.authentication ? async () => (await api.token()).token : undefined,
      topic.name,
      topic.partitions.map((p) => ({ partition: p.partition, low: p.low, high: p.high })),
      10,
      (got) => {
        setError(null);
        setRecords((prev) => [...got.reverse(), ...prev].slice(0, TAIL_MAX));
      },
      setError,
    );
    return () => void tail.stop();
  }, [on, session, topic.name, partitionsKey]);
  return (
    <div class="tail" data-testid="tail">
      <h3>
        Live tail{' '}
        <button type="button" onClick={() => setOn(!on)}>
          {on ? 'Pause' : 'Resume'}
        </button>{' '}
        <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as ViewMode)} data-testid="tail-mode">
          <option value="text">text</option>
          <option value="json">JSON</option>
          <option value="hex">hex</option>
        </select>
      </h3>
      <ErrorLine error={error} />
      <table>
        <thead>
          <tr>
            <th>partition</th>
            <th>offset</th>
            <th>time</th>
            <th>key</th>
            <th>value</th>
            <th>headers</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr key={`${r.partition}-${r.offset}`} class="record" data-partition={r.partition} data-offset={r.offset}>
              <td>{r.partition}</td>
              <td>{r.offset}</td>
              <td>{new Date(r.timestamp).toISOString().replace('T', ' ').replace('Z', '')}</td>
              <td>
                <pre>{showBytes(r.key, mode)}</pre>
              </td>
              <td>
                <pre class="value">{showBytes(r.value, mode)}</pre>
              </td>
              <td>
                <pre>{r.headers.map((h) => `${h.key}=${showBytes(h.value, mode)}`).join('\n')}</pre>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The client listener of the broker that served this page, for the browser client: `ws://` or `wss://` (a TLS
 * listener) on the page's host name. From /console/session, which any logged-in user may read (GET /cluster needs
 * describe on the cluster, which a user who may only read a topic does not have).
 */
function useSession(): { bootstrap: string; authentication: boolean } | null {
  const [session, setSession] = useState<{ bootstrap: string; authentication: boolean } | null>(null);
  useEffect(() => {
    void api.session().then(
      (s) => setSession({ bootstrap: `${s.tls ? 'wss' : 'ws'}://${location.hostname}:${s.port}`, authentication: s.authentication }),
      () => undefined,
    );
  }, []);
  return session;
}

// ------------------------------------------------------------------- groups

function GroupsPage() {
  const { data: groups, error } = usePoll(api.groups, []);
  return (
    <section id="groups">
      <h2>Consumer groups</h2>
      <ErrorLine error={error} />
      <table data-testid="groups">
        <thead>
          <tr>
            <th>group</th>
            <th>state</th>
            <th>protocol type</th>
          </tr>
        </thead>
        <tbody>
          {(groups ?? []).map((g: GroupSummary) => (
            <tr key={g.group} data-group={g.group}>
              <td>
                <a href={`#/groups/${encodeURIComponent(g.group)}`}>{g.group}</a>
              </td>
              <td>{g.state}</td>
              <td>{g.protocol_type ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

const LAG_WINDOW = 150; // samples kept: 5 minutes at one per 2 s

function GroupPage({ id }: { id: string }) {
  const [samples, setSamples] = useState<LagSample[]>([]);
  const load = useCallback(async () => {
    const g = await api.group(id);
    const byPartition: Record<string, number> = {};
    for (const o of g.offsets) if (o.lag !== null) byPartition[`${o.topic}/${o.partition}`] = o.lag;
    setSamples((prev) => [...prev, { t: Date.now() / 1000, total: g.total_lag, byPartition }].slice(-LAG_WINDOW));
    return g;
  }, [id]);
  const { data: g, error } = usePoll(load, [id]);
  const keys = g ? g.offsets.map((o) => `${o.topic}/${o.partition}`) : [];
  return (
    <section id="group">
      <h2>
        <a href="#/groups">Groups</a> / <span data-testid="group-name">{id}</span>
      </h2>
      <ErrorLine error={error} />
      {g && (
        <>
          <dl class="facts">
            <dt>state</dt>
            <dd data-testid="group-state">{g.state}</dd>
            <dt>generation</dt>
            <dd>{g.generation}</dd>
            <dt>protocol</dt>
            <dd>{g.protocol || '–'}</dd>
            <dt>total lag</dt>
            <dd data-testid="total-lag">{count(g.total_lag)}</dd>
          </dl>
          <h3>Lag over time</h3>
          <LagChart samples={samples} keys={keys} />
          <h3>Members</h3>
          <table data-testid="members">
            <thead>
              <tr>
                <th>member</th>
                <th>instance</th>
                <th>client</th>
                <th>host</th>
                <th>assignment</th>
              </tr>
            </thead>
            <tbody>
              {g.members.map((m) => (
                <tr key={m.member_id}>
                  <td>{m.member_id}</td>
                  <td>{m.group_instance_id ?? '–'}</td>
                  <td>{m.client_id}</td>
                  <td>{m.client_host}</td>
                  <td>{(m.assignment ?? []).map((a) => `${a.topic}[${a.partitions.join(',')}]`).join(' ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>Offsets and lag</h3>
          <table data-testid="lag">
            <thead>
              <tr>
                <th>partition</th>
                <th>committed</th>
                <th>log end</th>
                <th>lag</th>
                <th>owner</th>
              </tr>
            </thead>
            <tbody>
              {g.offsets.map((o) => (
                <tr key={`${o.topic}/${o.partition}`} data-partition={`${o.topic}/${o.partition}`}>
                  <td>
                    <a href={`#/topics/${encodeURIComponent(o.topic)}`}>{o.topic}</a>/{o.partition}
                  </td>
                  <td>{count(o.committed_offset)}</td>
                  <td>{count(o.log_end_offset)}</td>
                  <td data-field="lag">{count(o.lag)}</td>
                  <td>{o.owner ?? '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ResetOffsets group={g} />
        </>
      )}
    </section>
  );
}

function ResetOffsets({ group }: { group: GroupDetail }) {
  const [to, setTo] = useState<'earliest' | 'latest'>('earliest');
  const [result, setResult] = useState<string | null>(null);
  const reset = async (e: Event) => {
    e.preventDefault();
    try {
      const offsets = [];
      for (const topic of [...new Set(group.offsets.map((o) => o.topic))]) {
        const t = await api.topic(topic);
        for (const p of t.partitions) offsets.push({ topic, partition: p.partition, offset: (to === 'earliest' ? p.low : p.high) ?? 0 });
      }
      await api.resetOffsets(group.group, offsets);
      setResult(`reset ${offsets.length} partitions to ${to}`);
    } catch (err) {
      setResult(errorText(err));
    }
  };
  return (
    <form class="inline" onSubmit={reset} data-testid="reset-offsets">
      <h3>Reset offsets (the group must be empty)</h3>
      <select value={to} onChange={(e) => setTo((e.target as HTMLSelectElement).value as 'earliest' | 'latest')}>
        <option value="earliest">to earliest</option>
        <option value="latest">to latest</option>
      </select>
      <button type="submit">Reset</button>
      {result && <span class="result" data-testid="reset-result">{result}</span>}
    </form>
  );
}

// --------------------------------------------------------------------- app

function App() {
  const route = useRoute();
  const topic = /^\/topics\/(.+)$/.exec(route);
  const group = /^\/groups\/(.+)$/.exec(route);
  let page;
  if (topic) page = <TopicPage name={decodeURIComponent(topic[1]!)} />;
  else if (group) page = <GroupPage id={decodeURIComponent(group[1]!)} />;
  else if (route === '/topics') page = <TopicsPage />;
  else if (route === '/groups') page = <GroupsPage />;
  else page = <ClusterPage />;
  const active = (prefix: string) => (route === prefix || route.startsWith(`${prefix}/`) ? 'active' : '');
  return (
    <>
      <header>
        <h1>mq</h1>
        <nav>
          <a href="#/" class={route === '/' ? 'active' : ''}>
            Cluster
          </a>
          <a href="#/topics" class={active('/topics')}>
            Topics
          </a>
          <a href="#/groups" class={active('/groups')}>
            Groups
          </a>
        </nav>
      </header>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
(globalThis as { mqConsoleReady?: boolean }).mqConsoleReady = true;
