/**
 * A tiny raw Kafka-protocol client for tests of the Kafka listener: one TCP
 * connection, @mq/kafka-protocol frames, answers matched in order (as Kafka
 * answers them). No Kafka client library, so the listener is tested alone.
 */
import net from 'node:net';
import { decodeResponse, encodeRequest, FrameSplitter, type ApiDef, type Input } from '@mq/kafka-protocol';

export class KafkaWire {
  private readonly splitter = new FrameSplitter(64 * 1024 * 1024);
  private readonly frames: Buffer[] = [];
  private waiting: Array<() => void> = [];
  private correlation = 0;
  readonly closed: Promise<void>;
  isClosed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const f of this.splitter.push(chunk)) this.frames.push(f);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        this.isClosed = true;
        this.wake();
        resolve();
      });
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<KafkaWire> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new KafkaWire(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const fn of w) fn();
  }

  /** The next answer frame (without its size), or undefined once the connection closed. */
  async nextFrame(timeoutMs = 5000): Promise<Buffer | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0 && !this.isClosed) {
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiting.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames.shift();
  }

  async request<Req, Res>(api: ApiDef<Req, Res>, version: number, body: Input<Req>, timeoutMs?: number): Promise<Res> {
    const correlationId = ++this.correlation;
    this.socket.write(encodeRequest(api, version, correlationId, 'kafka-wire-test', body));
    const frame = await this.nextFrame(timeoutMs);
    if (!frame) throw new Error('connection closed before the answer');
    const r = decodeResponse(api, version, frame);
    if (r.correlationId !== correlationId) throw new Error(`answer ${r.correlationId} to request ${correlationId}`);
    return r.body;
  }

  sendRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}
