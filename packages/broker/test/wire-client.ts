/** A tiny raw WebSocket client speaking @mq/protocol/wire frames, for broker tests (in-process and e2e). */
import WebSocket from 'ws';
import { decodeResponse, encodeRequest, type mq, type RequestFrame } from '@mq/protocol/wire';

/**
 * A decoded response as tests read it: protobufjs fills proto3 scalars and
 * repeated fields with defaults, so only the oneof body may really be absent.
 */
export type Decoded<T> = T extends Uint8Array
  ? Uint8Array
  : T extends ReadonlyArray<infer U>
    ? Decoded<U>[]
    : T extends object
      ? { [K in keyof T]-?: Decoded<NonNullable<T[K]>> }
      : T;

export type WireResponse = Decoded<mq.ResponseFrame>;

export class TestClient {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (f: WireResponse) => void; reject: (e: Error) => void }>();
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly unmatched: WireResponse[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const frame = decodeResponse(data) as unknown as WireResponse;
      const p = this.pending.get(frame.correlationId);
      if (!p) {
        this.unmatched.push(frame);
        return;
      }
      this.pending.delete(frame.correlationId);
      p.resolve(frame);
    });
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        for (const p of this.pending.values()) p.reject(new Error(`connection closed ${code} ${reason.toString()}`));
        this.pending.clear();
        resolve({ code, reason: reason.toString() });
      });
    });
    ws.on('error', () => undefined);
  }

  static async connect(url: string, options: WebSocket.ClientOptions = {}): Promise<TestClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new TestClient(ws);
  }

  /** Sends a request frame and waits for its response. */
  request(frame: Omit<RequestFrame, 'correlationId'>, timeoutMs = 10_000): Promise<WireResponse> {
    const correlationId = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new Error(`no response to ${correlationId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(correlationId, {
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.ws.send(encodeRequest({ ...frame, correlationId }));
    });
  }

  /** Sends a frame expecting no response (acks=0); returns its correlation id. */
  fire(frame: Omit<RequestFrame, 'correlationId'>): number {
    const correlationId = this.next++;
    this.ws.send(encodeRequest({ ...frame, correlationId }));
    return correlationId;
  }

  sendRaw(data: Buffer | string, binary = true): void {
    this.ws.send(data, { binary });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await this.closed;
  }
}

