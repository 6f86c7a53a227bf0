/**
 * AlterUserScramCredentials: SCRAM credentials (computed by the client from
 * the password: salt, iterations, StoredKey, ServerKey) created, replaced or
 * deleted through the controller, one metadata command per entry, each
 * answered once applied here.
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import type { ScramMechanism } from '@mq/protocol/scram';
import { decodeCommand, encodeCommand, type MetadataCommand } from '../controller/commands.js';
import { wireError } from '../errors.js';
import { applied, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

const b64 = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array(0)).toString('base64');

export function alterUserScramCredentials(d: HandlerDeps): Handler<'alterUserScramCredentials'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const results: mq.AlterUserScramCredentialsResult.$Properties[] = [];
    const run = async (user: string, raw: Record<string, unknown>, done: () => boolean) => {
      try {
        // The rules of the metadata command (user name, mechanism, key sizes, iterations) checked before proposing.
        const cmd = decodeCommand(encodeCommand(raw as unknown as MetadataCommand));
        await d.controller.submit(cmd);
        await applied(d, done);
        ctx.logger.info({ audit: true, user, change: cmd.type, mechanism: (cmd as { mechanism?: string }).mechanism, principal: ctx.connection.session?.principal }, 'user credential changed');
        results.push({ user, errorCode: 0 });
      } catch (err) {
        results.push({ user, ...wireError(err) });
      }
    };
    for (const del of req.deletions ?? []) {
      const user = del.user ?? '';
      const mechanism = (del.mechanism || undefined) as ScramMechanism | undefined;
      await run(user, { type: 'deleteScramCredential', user, ...(mechanism ? { mechanism } : {}) }, () =>
        mechanism ? !md.scramCredential(user, mechanism) : !md.scramUsers().some((u) => u.user === user),
      );
    }
    for (const up of req.upsertions ?? []) {
      const user = up.user ?? '';
      const storedKey = b64(up.storedKey);
      await run(
        user,
        {
          type: 'upsertScramCredential',
          user,
          mechanism: up.mechanism ?? '',
          iterations: up.iterations ?? 0,
          salt: b64(up.salt),
          storedKey,
          serverKey: b64(up.serverKey),
          ...(ctx.bootstrap ? { onlyIfNoUsers: true } : {}),
        },
        () => b64(md.scramCredential(user, up.mechanism as ScramMechanism)?.storedKey) === storedKey,
      );
    }
    return { results };
  };
}

export function describeUserScramCredentials(d: HandlerDeps): Handler<'describeUserScramCredentials'> {
  const md = d.controller.metadata;
  return async (req) => {
    const all = md.scramUsers();
    const asked = req.users ?? [];
    if (asked.length === 0) return { results: all.map((u) => ({ user: u.user, errorCode: 0, credentials: u.credentials })) };
    return {
      results: asked.map((name) => {
        const u = all.find((x) => x.user === name);
        return u ? { user: name, errorCode: 0, credentials: u.credentials } : { user: name, ...wireError(new MqError('RESOURCE_NOT_FOUND', `user "${name}" does not exist (create it with: mq user create ${name})`)) };
      }),
    };
  };
}
