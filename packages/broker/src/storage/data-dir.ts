/**
 * The broker's data directory: `meta.properties` (broker id and cluster id,
 * checked on every start), the persisted broker configuration, a lock that
 * keeps a second broker out, and the clean-shutdown marker.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { lockDir, nodeFileSystem, type DirLock } from '@mq/log-store';
import { MqError } from '@mq/protocol/errors';
import { formatProperties, parseProperties } from '../config/config-def.js';
import { writeFileAtomic } from './atomic-file.js';

export const META_FILE = 'meta.properties';
export const BROKER_CONFIG_FILE = 'broker.properties';
export const CLEAN_SHUTDOWN_FILE = '.clean-shutdown';

export interface BrokerMeta {
  brokerId: number;
  clusterId: string;
}

/** A file's text, or undefined when it does not exist. */
export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A new cluster id: 16 random bytes, base64url (like Kafka's). */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** A new data directory's broker id when none is configured (Raft node ids start at 1: 0 means "no node"). */
export const DEFAULT_BROKER_ID = 1;

export interface LoadedMeta extends BrokerMeta {
  /** The id `meta.properties` said before it was renumbered (a single broker's old directory said 0). */
  renumberedFrom?: number;
}

/**
 * Reads `meta.properties`, or writes it on first start (broker id
 * DEFAULT_BROKER_ID unless one is configured). A broker id that differs from
 * the one stored refuses to start (the data belongs to another broker), as
 * Kafka does. `oneNode`: the broker runs as a one-node cluster, whose Raft
 * node id is its broker id and must be positive: a directory written by the
 * old single broker (broker 0) is renumbered to 1 unless broker id 0 is
 * asked for explicitly, which is refused.
 */
export async function loadOrCreateMeta(dataDir: string, brokerId: number | undefined, options: { oneNode?: boolean } = {}): Promise<LoadedMeta> {
  const file = path.join(dataDir, META_FILE);
  if (options.oneNode && brokerId === 0) {
    throw new MqError(
      'INVALID_CONFIG',
      'broker.id 0 cannot be used: a single broker runs as a one-node cluster whose Raft node ids start at 1 (0 means "no node"); leave broker.id unset (1) or pick a positive id',
    );
  }
  const text = await readOptional(file);
  if (text !== undefined) {
    const props = parseProperties(text, file);
    const stored = Number(props['broker.id']);
    const clusterId = props['cluster.id'];
    if (!Number.isInteger(stored) || !clusterId) {
      throw new MqError('INVALID_CONFIG', `${file} is damaged: it needs broker.id and cluster.id`);
    }
    if (options.oneNode && stored === 0 && (brokerId === undefined || brokerId === DEFAULT_BROKER_ID)) {
      await writeMeta(file, { brokerId: DEFAULT_BROKER_ID, clusterId });
      return { brokerId: DEFAULT_BROKER_ID, clusterId, renumberedFrom: 0 };
    }
    if (brokerId !== undefined && brokerId !== stored) {
      throw new MqError(
        'INVALID_CONFIG',
        `broker.id ${brokerId} does not match ${stored} stored in ${file}: this data directory belongs to broker ${stored}`,
      );
    }
    return { brokerId: stored, clusterId };
  }
  const meta = { brokerId: brokerId ?? DEFAULT_BROKER_ID, clusterId: newClusterId() };
  await writeMeta(file, meta);
  return meta;
}

async function writeMeta(file: string, meta: BrokerMeta): Promise<void> {
  await writeFileAtomic(file, formatProperties({ version: '1', 'broker.id': String(meta.brokerId), 'cluster.id': meta.clusterId }, 'mq broker metadata'));
}

export async function readPersistedBrokerConfig(dataDir: string): Promise<Record<string, string>> {
  const file = path.join(dataDir, BROKER_CONFIG_FILE);
  const text = await readOptional(file);
  return text === undefined ? {} : parseProperties(text, file);
}

export async function writePersistedBrokerConfig(dataDir: string, config: Readonly<Record<string, string>>): Promise<void> {
  await writeFileAtomic(
    path.join(dataDir, BROKER_CONFIG_FILE),
    formatProperties(config, 'mq broker configuration (explicit values; kept with the data)'),
  );
}

export type DataDirLock = DirLock;

/**
 * Takes the data directory's lock file (holding our pid) with the log
 * store's directory lock: a second broker on the same directory, in this
 * process or another, gets LOG_DIR_LOCKED; a lock left by a process that no
 * longer runs (after SIGKILL) is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  return lockDir(dataDir, nodeFileSystem);
}

/** True when the previous run ended with a clean shutdown; removes the marker. */
export async function takeCleanShutdownMarker(dataDir: string): Promise<boolean> {
  const file = path.join(dataDir, CLEAN_SHUTDOWN_FILE);
  try {
    await stat(file);
  } catch {
    return false;
  }
  await rm(file, { force: true });
  return true;
}

export async function writeCleanShutdownMarker(dataDir: string): Promise<void> {
  await writeFileAtomic(path.join(dataDir, CLEAN_SHUTDOWN_FILE), `${new Date().toISOString()}\n`);
}
