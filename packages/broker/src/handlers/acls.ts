/**
 * CreateAcls, DeleteAcls, DescribeAcls: the ACLs of the metadata log
 * (security/acl.ts), changed through the controller and answered once the
 * change is applied here.
 */
import type { mq } from '@mq/protocol/wire';
import { matchesFilter, parseAcl, parseAclFilter, type AclEntry, type AclFilter } from '../security/acl.js';
import { wireError } from '../errors.js';
import { applied, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

const wire = (a: AclEntry): mq.AclBinding.$Properties => ({ ...a });

export function createAcls(d: HandlerDeps): Handler<'createAcls'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const parsed = (req.creations ?? []).map((c) => {
      try {
        return parseAcl(c as Record<string, unknown>);
      } catch (err) {
        return err as Error;
      }
    });
    const acls = parsed.filter((p): p is AclEntry => !(p instanceof Error));
    let failure: Error | undefined;
    if (acls.length > 0) {
      try {
        await d.controller.submit({ type: 'createAcls', acls });
        await applied(d, () => acls.every((a) => md.acls().some((b) => matchesFilter(b, a))));
        ctx.logger.info({ audit: true, acls, principal: ctx.connection.session?.principal }, 'ACLs created');
      } catch (err) {
        failure = err as Error;
      }
    }
    return { results: parsed.map((p) => (p instanceof Error ? wireError(p) : failure ? wireError(failure) : { errorCode: 0 })) };
  };
}

export function deleteAcls(d: HandlerDeps): Handler<'deleteAcls'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const results: mq.DeleteAclsResult.$Properties[] = [];
    for (const raw of req.filters ?? []) {
      try {
        const filter: AclFilter = parseAclFilter(raw as Record<string, unknown>);
        const matched = md.acls().filter((a) => matchesFilter(a, filter));
        if (matched.length > 0) {
          await d.controller.submit({ type: 'deleteAcls', filters: [filter] });
          await applied(d, () => !md.acls().some((a) => matchesFilter(a, filter)));
          ctx.logger.info({ audit: true, filter, deleted: matched.length, principal: ctx.connection.session?.principal }, 'ACLs deleted');
        }
        results.push({ errorCode: 0, deleted: matched.map(wire) });
      } catch (err) {
        results.push(wireError(err));
      }
    }
    return { results };
  };
}

export function describeAcls(d: HandlerDeps): Handler<'describeAcls'> {
  const md = d.controller.metadata;
  return async (req) => {
    const filter = parseAclFilter((req.filter ?? {}) as Record<string, unknown>);
    return { errorCode: 0, acls: md.acls().filter((a) => matchesFilter(a, filter)).map(wire) };
  };
}
