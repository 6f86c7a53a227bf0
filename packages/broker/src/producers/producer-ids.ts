/**
 * Producer ids for InitProducerId, handed out from blocks (Kafka's
 * ProducerIdManager) that the controller allocates (allocateProducerIds, a
 * metadata-log command, forwarded to the active controller like any other),
 * so a restart never reuses an id.
 */
import { MqError } from '@mq/protocol/errors';

/** Ids per block (Kafka: 1000). */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
/** Where the single broker of before issue 13 kept the first id of its next block (read once by the migration). */
export const PRODUCER_ID_BLOCK_FILE = 'producer-id-block';

export interface ProducerIdBlock {
  firstProducerId: number;
  count: number;
}

export type ProducerIdBlockSource = () => Promise<ProducerIdBlock>;

export class ProducerIdManager {
  private next = 0;
  private end = 0;
  private fetching: Promise<void> | null = null;

  constructor(private readonly source: ProducerIdBlockSource) {}

  /** A producer id no one got before (nor will get after a restart). */
  async allocate(): Promise<number> {
    while (this.next >= this.end) {
      this.fetching ??= this.source()
        .then((b) => {
          if (!Number.isSafeInteger(b.firstProducerId) || b.firstProducerId < 0 || !Number.isSafeInteger(b.count) || b.count < 1) {
            throw new MqError('UNKNOWN', `bad producer id block ${JSON.stringify(b)}`);
          }
          this.next = b.firstProducerId;
          this.end = b.firstProducerId + b.count;
        })
        .finally(() => {
          this.fetching = null;
        });
      await this.fetching;
    }
    return this.next++;
  }
}

/** Blocks from the cluster's controller (allocateProducerIds in the metadata log). */
export function controllerBlockSource(
  submit: (command: { type: 'allocateProducerIds'; brokerId: number; count: number }) => Promise<unknown>,
  brokerId: number,
  blockSize = PRODUCER_ID_BLOCK_SIZE,
): ProducerIdBlockSource {
  return async () => (await submit({ type: 'allocateProducerIds', brokerId, count: blockSize })) as ProducerIdBlock;
}
