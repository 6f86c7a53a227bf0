import { EntryType } from '@mq/consensus';
import { encodeCommand, type MetadataCommand } from './commands.js';
import { MetadataFeed } from './metadata-feed.js';
import { MetadataState } from './metadata-state.js';

function entry(index: number, cmd: MetadataCommand) {
  return { index, term: 1, type: EntryType.Normal, data: encodeCommand(cmd) };
}

function register(id: number) {
  return { type: 'registerBroker', id, host: 'h', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation: `run-${id}` } as const;
}

/** A manual timer for waitBeyond. */
function timers() {
  const pending = new Set<() => void>();
  return {
    set: (fn: () => void) => {
      pending.add(fn);
      return () => pending.delete(fn);
    },
    fire: () => {
      for (const fn of [...pending]) fn();
      pending.clear();
    },
    get count() {
      return pending.size;
    },
  };
}

describe('MetadataFeed', () => {
  it('serves the entries after an index, and a snapshot once the index is older than its window', () => {
    const feed = new MetadataFeed(new MetadataState(), { maxEntries: 3 });
    for (let i = 1; i <= 5; i++) feed.apply(entry(i + 10, register(i)));
    expect(feed.applied).toBe(15);
    const recent = feed.read(12, 100);
    expect(recent.kind).toBe('entries');
    if (recent.kind === 'entries') expect(recent.entries.map((e) => e.index)).toEqual([13, 14, 15]);
    const capped = feed.read(12, 2);
    if (capped.kind === 'entries') expect(capped.entries.map((e) => e.index)).toEqual([13, 14]);
    const none = feed.read(15, 100);
    expect(none).toMatchObject({ kind: 'entries', entries: [], applied: 15 });

    // Index 11 is no longer held: the whole state, which an observer restores and continues from.
    const old = feed.read(11, 100);
    expect(old.kind).toBe('snapshot');
    if (old.kind !== 'snapshot') return;
    expect(old.index).toBe(15);
    const observer = new MetadataState();
    observer.restore(old.data, old.index);
    expect(observer.brokers().map((b) => b.id)).toEqual([1, 2, 3, 4, 5]);
    expect(observer.lastApplied).toBe(15);
  });

  it('after a restore, anything before the snapshot is served as a snapshot', () => {
    const source = new MetadataState();
    source.applyCommand(register(1), 7);
    const feed = new MetadataFeed(new MetadataState());
    feed.restore(source.snapshot(), 7);
    expect(feed.read(3, 10).kind).toBe('snapshot');
    expect(feed.read(7, 10)).toMatchObject({ kind: 'entries', entries: [] });
    feed.apply(entry(8, register(2)));
    const r = feed.read(7, 10);
    if (r.kind === 'entries') expect(r.entries.map((e) => e.index)).toEqual([8]);
  });

  it('waitBeyond resolves on the next applied entry, on its timer, or on abort', async () => {
    const feed = new MetadataFeed(new MetadataState());
    feed.apply(entry(1, register(1)));
    const t = timers();
    await feed.waitBeyond(0, 1000, t.set); // already beyond
    expect(t.count).toBe(0);

    let done = false;
    const waiting = feed.waitBeyond(1, 1000, t.set).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    feed.apply(entry(2, register(2)));
    await waiting;
    expect(t.count).toBe(0); // its timer was cancelled

    const timed = feed.waitBeyond(2, 1000, t.set);
    t.fire();
    await timed;

    const abort = new AbortController();
    const aborted = feed.waitBeyond(2, 1000, t.set, abort.signal);
    abort.abort();
    await aborted;
  });
});
