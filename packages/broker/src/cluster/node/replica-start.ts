/**
 * When a broker's replicas start: only once it has applied everything the
 * controller had committed when it started (on a restart the metadata log
 * replays old leaderships before the current ones), and when it serves:
 * unfenced, with its partitions matching the metadata.
 */
import type { Controller } from '../../controller/controller.js';
import { metadataChange } from '../../controller/metadata-wait.js';
import type { ReplicaManager } from '../replica-manager.js';

export class ReplicaStart {
  private caughtUp: boolean;
  private started: () => void = () => undefined;
  private readonly running = new Promise<void>((resolve) => (this.started = resolve));

  /** Without the broker role nothing starts, and the metadata counts as caught up. */
  constructor(
    private readonly controller: Pick<Controller, 'catchUp' | 'metadata'>,
    private readonly replicas: Pick<ReplicaManager, 'start' | 'settled'>,
    broker: boolean,
    private readonly closing: AbortSignal,
  ) {
    this.caughtUp = !broker;
    if (broker) void this.startWhenCaughtUp();
    // Closing: whoever waits for the replicas stops waiting.
    closing.addEventListener('abort', () => this.started(), { once: true });
  }

  /** This broker has applied everything the controller had committed when it started; always, without the broker role. */
  get metadataCaughtUp(): boolean {
    return this.caughtUp;
  }

  private async startWhenCaughtUp(): Promise<void> {
    while (!this.closing.aborted) {
      try {
        await this.controller.catchUp(5000);
        this.caughtUp = true;
        this.replicas.start();
        this.started();
        return;
      } catch {
        // no controller yet: keep waiting
      }
    }
  }

  /** Resolves once broker `brokerId` is unfenced and its partitions match the metadata (the sole voter's start), or the node closes. */
  async untilServing(brokerId: number): Promise<void> {
    const md = this.controller.metadata;
    const live = () => this.closing.aborted || md.broker(brokerId)?.fenced === false;
    if (!live()) await metadataChange(md, { until: live, signal: this.closing });
    await this.running;
    await this.replicas.settled();
  }
}
