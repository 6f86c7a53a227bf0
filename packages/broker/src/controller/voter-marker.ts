/**
 * A controller voter must not come back with an empty metadata log: a Raft
 * voter that forgot its term, vote and acknowledged entries can grant a
 * second vote in a term it already voted in (two active controllers) or make
 * a quorum of an entry that only it and a minority hold. So the first start
 * of a voter writes `controller-voter.properties` beside the data; a later
 * start that finds the marker but no metadata log refuses, with what to do.
 * (A wipe of the whole directory, marker included, cannot be told from a
 * new voter on the disk alone; that needs quorum membership changes.)
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { MqError } from '@mq/protocol/errors';
import { formatProperties, parseProperties } from '../config/config-def.js';
import { writeFileAtomic } from '../storage/atomic-file.js';

export const VOTER_MARKER_FILE = 'controller-voter.properties';

async function nonEmptyFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).size > 0;
  } catch {
    return false;
  }
}

/** Whether the Raft storage directory holds a log or a snapshot. */
export async function hasMetadataLog(metadataDir: string): Promise<boolean> {
  return (await nonEmptyFile(path.join(metadataDir, 'wal'))) || (await nonEmptyFile(path.join(metadataDir, 'snapshot')));
}

/** Refuses (INVALID_CONFIG) a voter whose data directory was a voter's but whose metadata log is gone. */
export async function checkVoterMetadata(dataDir: string, metadataDirName: string, brokerId: number): Promise<void> {
  const marker = path.join(dataDir, VOTER_MARKER_FILE);
  let text: string;
  try {
    text = await readFile(marker, 'utf8');
  } catch {
    return; // never a voter here: a first start
  }
  const metadataDir = path.join(dataDir, metadataDirName);
  if (await hasMetadataLog(metadataDir)) return;
  const props = parseProperties(text, marker);
  throw new MqError(
    'INVALID_CONFIG',
    `controller ${brokerId} refuses to start as a voter: ${dataDir} belonged to controller voter ${props['node.id'] ?? '?'} (since ${props['since'] ?? '?'}) but its metadata log ${metadataDir} is empty or missing; ` +
      `a Raft voter that forgot its votes can help elect two controllers. Restore ${metadataDirName} from a backup; if it is lost for good and the other voters have an active controller, ` +
      `delete ${marker} to start it as a new, empty voter (safe once the remaining voters have elected a controller in a later term)`,
  );
}

/** `now`: the controller's clock, for the marker's `since` line. */
export async function writeVoterMarker(dataDir: string, brokerId: number, now: number): Promise<void> {
  const marker = path.join(dataDir, VOTER_MARKER_FILE);
  try {
    await stat(marker);
    return;
  } catch {
    // first start as a voter
  }
  await writeFileAtomic(marker, formatProperties({ 'node.id': String(brokerId), since: new Date(now).toISOString() }, 'mq: this data directory holds a controller voter\'s metadata log (see packages/broker/README.md)'));
}
