/**
 * The request handlers a cluster node serves, by its roles: a broker the
 * whole partition handler map (handlers/), a controller-only process the
 * controller's few.
 */
import { partitionHandlers, type HandlerDeps } from '../../handlers/index.js';
import type { HandlerMap } from '../../handlers/types.js';
import type { ProcessRoles } from '../../controller/roles.js';

/** The handlers a controller-only process serves (no partitions, no groups): who is the controller, the metadata, forwarding and metadata fetches, the quorum's membership. */
export const CONTROLLER_ONLY_APIS = ['metadata', 'describeConfigs', 'controllerForward', 'alterRaftVoters', 'describeQuorum'] as const;

export function nodeHandlers(roles: ProcessRoles, deps: HandlerDeps): HandlerMap {
  const all = partitionHandlers(deps);
  return roles.broker ? all : Object.fromEntries(CONTROLLER_ONLY_APIS.map((k) => [k, all[k]]));
}
