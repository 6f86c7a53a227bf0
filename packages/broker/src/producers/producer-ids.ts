/**
 * Producer ids for InitProducerId, handed out from blocks (Kafka's
 * ProducerIdManager). A single broker takes its blocks from a file in the
 * data directory, writing the next block's start before it hands out any id
 * of the block, so a restart (even a SIGKILL) never reuses an id. A broker
 * in a cluster takes blocks from the controller (allocateProducerIds, a
 * metadata-log command, forwarded to the active controller like any other).
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { MqError } from '@mq/protocol/errors';
import { writeFileAtomic } from '../storage/atomic-file.js';

/** Ids per block (Kafka: 1000). */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
/** Holds the first id of the next block a single broker may take. */
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

/** Blocks persisted in `<dataDir>/producer-id-block`: the next start is on disk before a block's ids are used. */
export async function fileBlockSource(dataDir: string, blockSize = PRODUCER_ID_BLOCK_SIZE): Promise<ProducerIdBlockSource> {
  const file = path.join(dataDir, PRODUCER_ID_BLOCK_FILE);
  let nextStart = 0;
  try {
    const text = (await readFile(file, 'utf8')).trim();
    nextStart = Number(text);
    if (!Number.isSafeInteger(nextStart) || nextStart < 0) {
      throw new MqError('STORAGE_ERROR', `${file} holds ${JSON.stringify(text)}, not a producer id; fix or remove it only if no producer id was ever handed out`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let writing: Promise<ProducerIdBlock> | null = null;
  return () =>
    (writing ??= (async () => {
      const first = nextStart;
      await writeFileAtomic(file, `${first + blockSize}\n`);
      nextStart = first + blockSize;
      return { firstProducerId: first, count: blockSize };
    })().finally(() => {
      writing = null;
    }));
}

/** Blocks from the cluster's controller (allocateProducerIds in the metadata log). */
export function controllerBlockSource(
  submit: (command: { type: 'allocateProducerIds'; brokerId: number; count: number }) => Promise<unknown>,
  brokerId: number,
  blockSize = PRODUCER_ID_BLOCK_SIZE,
): ProducerIdBlockSource {
  return async () => (await submit({ type: 'allocateProducerIds', brokerId, count: blockSize })) as ProducerIdBlock;
}
