/**
 * The produce handler's answers in parts (ProduceRequest.partial_answers), over an append whose completions the
 * test controls: each partition is answered exactly once, as it completes; the handler's result holds the rest;
 * without a door that can send parts (or without the flag) the whole answer comes at once.
 */
import pino from 'pino';
import { MqError, errorNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import type { RequestContext } from '../context.js';
import { produceHandler, type PartitionAppended } from './produce.js';

function deferred() {
  let resolve!: (v: PartitionAppended) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<PartitionAppended>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const appended = (baseOffset: number): PartitionAppended => ({ baseOffset, logAppendTime: -1, logStartOffset: 0 });
const tick = () => new Promise((r) => setImmediate(r));

function setup() {
  const waits = new Map<string, ReturnType<typeof deferred>>();
  const handler = produceHandler(
    (topic, partition) => {
      const d = deferred();
      waits.set(`${topic}-${partition}`, d);
      return d.promise;
    },
    { defaultTimeoutMs: 1000, logRefusal: () => undefined },
  );
  const parts: mq.ProduceResponse.$Properties[] = [];
  const ctx = (withParts: boolean): RequestContext =>
    ({
      broker: { clock: () => 0, metrics: { producedBytes: () => undefined } },
      connection: { id: 1, remote: 'test', clientId: '', signal: new AbortController().signal },
      apiVersion: 1,
      logger: pino({ level: 'silent' }),
      ...(withParts ? { answerPart: (p: unknown) => parts.push(p as mq.ProduceResponse.$Properties) } : {}),
    }) as unknown as RequestContext;
  const request = (partialAnswers: boolean): mq.ProduceRequest.$Properties => ({
    acks: -1,
    partialAnswers,
    topics: [
      { name: 'a', partitions: [{ partition: 0, records: new Uint8Array(1) }, { partition: 1, records: new Uint8Array(1) }] },
      { name: 'b', partitions: [{ partition: 0, records: new Uint8Array(1) }] },
    ],
  });
  const answered = (r: mq.ProduceResponse.$Properties) => (r.topics ?? []).flatMap((t) => (t.partitions ?? []).map((p) => `${t.name}-${p.partition}@${p.baseOffset}:${p.errorCode ?? 0}`));
  return { waits, handler, parts, ctx, request, answered };
}

describe('produce answers in parts', () => {
  it('answers each partition once, as it completes; the last part holds what completed after the last part', async () => {
    const s = setup();
    const result = s.handler(s.request(true), s.ctx(true)) as Promise<mq.ProduceResponse.$Properties>;
    let last: mq.ProduceResponse.$Properties | undefined;
    void result.then((r) => (last = r));
    s.waits.get('b-0')!.resolve(appended(7));
    s.waits.get('a-1')!.reject(new MqError('NOT_LEADER', 'moved'));
    await tick();
    expect(s.parts.map((p) => s.answered(p).sort())).toEqual([[`a-1@-1:${errorNumber('NOT_LEADER')}`, 'b-0@7:0']]);
    expect(last).toBeUndefined();
    s.waits.get('a-0')!.resolve(appended(3));
    expect(s.answered(await result)).toEqual(['a-0@3:0']);
    expect(s.parts).toHaveLength(1);
  });

  it('answers everything at once without a door that can send parts, or without the flag', async () => {
    for (const [flag, door] of [
      [true, false],
      [false, true],
    ] as const) {
      const s = setup();
      const result = s.handler(s.request(flag), s.ctx(door)) as Promise<mq.ProduceResponse.$Properties>;
      s.waits.get('b-0')!.resolve(appended(7));
      await tick();
      s.waits.get('a-0')!.resolve(appended(3));
      s.waits.get('a-1')!.resolve(appended(5));
      expect(s.answered(await result).sort()).toEqual(['a-0@3:0', 'a-1@5:0', 'b-0@7:0']);
      expect(s.parts).toEqual([]);
    }
  });
});
