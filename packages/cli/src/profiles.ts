/**
 * Named connection profiles (as `rpk profile` and `nats context`): a
 * bootstrap address and timeouts saved once under a name, in
 * `$XDG_CONFIG_HOME/mq/profiles.json` (default `~/.config/mq`), one of them
 * in use. A client command without `--bootstrap` and without `MQ_BOOTSTRAP`
 * takes its address from `--profile NAME`, `MQ_PROFILE`, or the profile in
 * use, in that order. The file is written atomically and readable only by
 * its owner (credentials will live here once security exists).
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MqError } from '@mq/protocol/errors';
import { UsageError } from './errors.js';

export interface Profile {
  bootstrap: string;
  /** Log in as this user (SASL SCRAM). */
  user?: string;
  /** Its password (this file is readable only by its owner). */
  password?: string;
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export interface ProfileFile {
  version: 1;
  /** The profile in use, if any. */
  current?: string;
  profiles: Record<string, Profile>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The profiles file under XDG_CONFIG_HOME, else HOME/.config; undefined when the environment names neither. */
export function profilesPath(env: NodeJS.ProcessEnv): string | undefined {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : undefined);
  return base ? path.join(base, 'mq', 'profiles.json') : undefined;
}

export function checkProfileName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`profile name "${name}" must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  return name;
}

export function readProfiles(env: NodeJS.ProcessEnv): ProfileFile {
  const file = profilesPath(env);
  if (!file) return { version: 1, profiles: {} };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, profiles: {} };
    throw new MqError('INVALID_CONFIG', `cannot read ${file}: ${(err as Error).message}`, { retriable: false });
  }
  try {
    const parsed = JSON.parse(text) as ProfileFile;
    if (parsed.version !== 1 || typeof parsed.profiles !== 'object' || parsed.profiles === null) throw new Error('not a version 1 profiles file');
    for (const [name, p] of Object.entries(parsed.profiles)) {
      if (typeof p?.bootstrap !== 'string' || p.bootstrap === '') throw new Error(`profile "${name}" has no bootstrap`);
    }
    return parsed;
  } catch (err) {
    throw new MqError('INVALID_CONFIG', `${file} is damaged (${(err as Error).message}); fix it or delete it`, { retriable: false });
  }
}

export function writeProfiles(env: NodeJS.ProcessEnv, profiles: ProfileFile): string {
  const file = profilesPath(env);
  if (!file) throw new UsageError('profiles live under $XDG_CONFIG_HOME/mq or $HOME/.config/mq: set HOME or XDG_CONFIG_HOME');
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(profiles, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

/** The profile a client command uses: `--profile`, then MQ_PROFILE, then the one in use; undefined for none. */
export function selectedProfile(env: NodeJS.ProcessEnv, flag: string | undefined): { name: string; profile: Profile } | undefined {
  const named = flag ?? (env.MQ_PROFILE || undefined);
  const file = named !== undefined || profilesPath(env) ? readProfiles(env) : undefined;
  if (!file) return undefined;
  const name = named ?? file.current;
  if (name === undefined) return undefined;
  const profile = file.profiles[name];
  if (!profile) {
    const from = flag !== undefined ? '--profile' : named !== undefined ? 'MQ_PROFILE' : 'the profile in use';
    throw new UsageError(`${from} names "${name}", which does not exist (mq profile list shows them; create it with: mq profile create ${name} --bootstrap host:port)`);
  }
  return { name, profile };
}
