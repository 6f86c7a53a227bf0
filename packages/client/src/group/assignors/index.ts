import { MqError } from '@mq/protocol/errors';
import type { Assignor } from '../types.js';
import { rangeAssignor } from './range.js';
import { roundRobinAssignor } from './round-robin.js';
import { cooperativeStickyAssignor, stickyAssignor } from './sticky.js';

export { rangeAssignor } from './range.js';
export { roundRobinAssignor } from './round-robin.js';
export { cooperativeStickyAssignor, stickyAssign, stickyAssignor } from './sticky.js';

export const BUILTIN_ASSIGNORS: Readonly<Record<string, Assignor>> = {
  range: rangeAssignor,
  roundrobin: roundRobinAssignor,
  'round-robin': roundRobinAssignor,
  sticky: stickyAssignor,
  'cooperative-sticky': cooperativeStickyAssignor,
};

/** Resolves assignor names (or custom assignors) in preference order. */
export function resolveAssignors(list: ReadonlyArray<string | Assignor>): Assignor[] {
  if (list.length === 0) throw new MqError('INVALID_ARGUMENT', 'at least one partition assignor is needed');
  const out = list.map((a) => {
    if (typeof a !== 'string') return a;
    const found = BUILTIN_ASSIGNORS[a];
    if (!found) {
      throw new MqError('INVALID_ARGUMENT', `unknown partition assignor "${a}" (use one of: range, roundrobin, sticky, cooperative-sticky)`);
    }
    return found;
  });
  const names = new Set<string>();
  for (const a of out) {
    if (names.has(a.name)) throw new MqError('INVALID_ARGUMENT', `partition assignor "${a.name}" is listed twice`);
    names.add(a.name);
  }
  return out;
}

/** Cooperative only when every assignor supports it (as in Kafka). */
export function rebalanceProtocolOf(assignors: readonly Assignor[]): 'eager' | 'cooperative' {
  return assignors.every((a) => a.protocols.includes('cooperative')) ? 'cooperative' : 'eager';
}
