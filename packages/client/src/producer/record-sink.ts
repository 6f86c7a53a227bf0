/**
 * Where the result of each record goes once its batch completes. One batch
 * result resolves every record in it; `sendBatch` shares one sink among all
 * its records, so a whole array costs one promise.
 */
export interface RecordMetadata {
  topic: string;
  partition: number;
  /** The record's offset; -1 with acks=0 (the broker does not answer). */
  offset: number;
}

export interface RecordSink {
  ok(index: number, topic: string, partition: number, offset: number): void;
  fail(index: number, err: unknown): void;
}

/**
 * The sink of one `send()` is its promise's resolve function itself: no
 * object per record, and the promise's reject function is not kept (it is
 * garbage at once instead of living until the ack). A failure resolves the
 * promise with a rejected one, which rejects it with the same error.
 */
export type ResolveSink = (m: RecordMetadata | PromiseLike<RecordMetadata>) => void;

/** Where a record's result goes: a sink object, or the resolve function of one `send()`. */
export type Sink = RecordSink | ResolveSink;

export function sinkOk(sink: Sink, index: number, topic: string, partition: number, offset: number): void {
  if (typeof sink === 'function') sink({ topic, partition, offset });
  else sink.ok(index, topic, partition, offset);
}

export function sinkFail(sink: Sink, index: number, err: unknown): void {
  if (typeof sink === 'function') {
    // The caller's promise rejects with err; this inner one must not count as unhandled on its own.
    const rejected = Promise.reject(err);
    rejected.catch(() => undefined);
    sink(rejected);
  } else sink.fail(index, err);
}

/** The sink of one `sendBatch()`: resolves with every record's metadata, or rejects with the first failure. */
export class GroupSink implements RecordSink {
  private remaining: number;
  private failed = false;
  readonly results: RecordMetadata[];

  constructor(
    count: number,
    private readonly resolve: (m: RecordMetadata[]) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.remaining = count;
    this.results = new Array<RecordMetadata>(count);
    if (count === 0) resolve(this.results);
  }
  ok(index: number, topic: string, partition: number, offset: number): void {
    this.results[index] = { topic, partition, offset };
    if (--this.remaining === 0 && !this.failed) this.resolve(this.results);
  }
  fail(_index: number, err: unknown): void {
    this.remaining--;
    if (this.failed) return;
    this.failed = true;
    this.reject(err);
  }
}

/**
 * The sink of fire-and-forget `write()`s: nothing per record on success; the
 * first failure (and a count) is kept for the next `flush()`/`close()` to
 * throw, and each failure goes to `onError` when given.
 */
export class ErrorSink implements RecordSink {
  private first: unknown;
  private failures = 0;

  constructor(private readonly onError?: (err: unknown) => void) {}

  ok(): void {}

  fail(_index: number, err: unknown): void {
    if (this.failures++ === 0) this.first = err;
    try {
      this.onError?.(err);
    } catch {
      // a throwing callback must not break the producer; the failure is still reported by flush()
    }
  }

  /** The failures since the last call: the first error and how many there were. */
  take(): { error: unknown; count: number } | undefined {
    if (this.failures === 0) return undefined;
    const out = { error: this.first, count: this.failures };
    this.first = undefined;
    this.failures = 0;
    return out;
  }
}
