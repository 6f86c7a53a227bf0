import type { Message } from '../core/types.js';
import type { RaftTransport } from '../node/types.js';

/**
 * An in-process network of Raft transports, for tests and single-process
 * setups: delivery is asynchronous (next macrotask), in order per link, and
 * links can be cut in either direction.
 */
export class MemoryNetwork {
  private readonly handlers = new Map<number, (m: Message) => void>();
  private readonly blocked = new Set<string>();
  delivered = 0;
  dropped = 0;

  transport(id: number): RaftTransport {
    let closed = false;
    return {
      send: (messages) => {
        if (closed) return;
        for (const m of messages) {
          if (this.blocked.has(`${m.from}>${m.to}`)) {
            this.dropped++;
            continue;
          }
          const copy = structuredClone(m);
          setImmediate(() => {
            const h = this.handlers.get(copy.to);
            if (!h || this.blocked.has(`${copy.from}>${copy.to}`)) {
              this.dropped++;
              return;
            }
            this.delivered++;
            h(copy);
          });
        }
      },
      listen: (h) => {
        this.handlers.set(id, h);
      },
      close: async () => {
        closed = true;
        this.handlers.delete(id);
      },
    };
  }

  /** Drops messages from `a` to `b` (one way) until heal(). */
  block(a: number, b: number): void {
    this.blocked.add(`${a}>${b}`);
  }

  isolate(id: number, others: number[]): void {
    for (const o of others) {
      if (o === id) continue;
      this.block(id, o);
      this.block(o, id);
    }
  }

  heal(): void {
    this.blocked.clear();
  }
}
