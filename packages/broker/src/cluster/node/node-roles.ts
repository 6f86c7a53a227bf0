/**
 * What this process is in the cluster (`process.roles`) and who votes in the
 * metadata quorum, from its configuration. Without cluster settings a broker
 * is a one-node cluster: broker and the quorum's only voter (a lone KRaft
 * node in combined mode).
 */
import { MqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../../config/broker-config.js';
import { parseVoters } from '../../controller/options.js';
import { parseProcessRoles, type ProcessRoles } from '../../controller/roles.js';

export interface NodeRoles {
  roles: ProcessRoles;
  /** `controller.quorum.voters`, or this broker alone in a one-node cluster. */
  voters: string;
  /** The voters' ids (none for a broker-only process that knows only bootstrap servers). */
  voterIds: number[];
}

/** Whether the configuration names other cluster members (voters or controllers); without them a broker is a one-node cluster. */
export function isClusterConfig(config: BrokerConfig): boolean {
  return config.get('controller.quorum.voters').trim() !== '' || config.get('controller.quorum.bootstrap.servers').trim() !== '';
}

/**
 * The voters of a one-node cluster: this broker alone. The only voter opens
 * no Raft listener and dials no one, so the address is never used.
 */
export function oneNodeVoters(brokerId: number): string {
  return `${brokerId}@localhost:1`;
}

/** The roles and voters of this process; INVALID_CONFIG when a one-node cluster is asked to be anything but broker,controller. */
export function nodeRoles(brokerId: number, cfg: BrokerConfig, oneNode: boolean): NodeRoles {
  const voters = oneNode ? oneNodeVoters(brokerId) : cfg.get('controller.quorum.voters');
  if (oneNode && !['', 'broker,controller', 'controller,broker'].includes(cfg.get('process.roles').replace(/\s/g, ''))) {
    throw new MqError(
      'INVALID_CONFIG',
      `process.roles=${cfg.get('process.roles')} needs a cluster: set controller.quorum.voters (or, for process.roles=broker, controller.quorum.bootstrap.servers); a broker without them is a one-node cluster (broker,controller)`,
    );
  }
  const roles = parseProcessRoles({
    brokerId,
    roles: oneNode ? 'broker,controller' : cfg.get('process.roles'),
    voters,
    bootstrapServers: cfg.get('controller.quorum.bootstrap.servers'),
    raftAddress: cfg.get('controller.raft.address'),
  });
  return { roles, voters, voterIds: voters.trim() ? parseVoters(voters).map((v) => v.id) : [] };
}
