import { EMPTY, type Message } from './types.js';

const MAX_PENDING_READS = 4096;

interface ReadRequest {
  key: string;
  index: number;
  req: Message;
  acks: Set<number>;
}

/** ReadIndex requests waiting for a quorum of heartbeat acks (etcd raft's readOnly, safe mode). */
export class ReadOnly {
  private queue: ReadRequest[] = [];
  private byKey = new Map<string, ReadRequest>();

  /** Queues a read at commit index `index`; false when full or the context is already queued. */
  add(index: number, req: Message, self: number): boolean {
    const key = Buffer.from(req.context).toString('hex');
    if (this.byKey.has(key) || this.queue.length >= MAX_PENDING_READS) return false;
    const r = { key, index, req, acks: new Set([self]) };
    this.queue.push(r);
    this.byKey.set(key, r);
    return true;
  }

  recvAck(from: number, ctx: Uint8Array): boolean {
    const r = this.byKey.get(Buffer.from(ctx).toString('hex'));
    if (!r) return false;
    r.acks.add(from);
    return true;
  }

  /** When the request of `ctx` has a quorum, releases it and every request queued before it. */
  advance(ctx: Uint8Array, hasQuorum: (acks: Set<number>) => boolean): ReadRequest[] {
    const key = Buffer.from(ctx).toString('hex');
    const r = this.byKey.get(key);
    if (!r || !hasQuorum(r.acks)) return [];
    const i = this.queue.indexOf(r);
    const released = this.queue.splice(0, i + 1);
    for (const x of released) this.byKey.delete(x.key);
    return released;
  }

  lastContext(): Uint8Array {
    return this.queue.length > 0 ? this.queue[this.queue.length - 1]!.req.context : EMPTY;
  }

  get pending(): number {
    return this.queue.length;
  }

  reset(): void {
    this.queue = [];
    this.byKey.clear();
  }
}
