/**
 * `process.roles`: what one mq process is in a cluster, as in Kafka KRaft.
 * `broker,controller` is a Raft voter of the metadata log that also hosts
 * partitions (small clusters: one process, one command); `controller` is a
 * dedicated voter that hosts nothing; `broker` hosts partitions and follows
 * the metadata log from the active controller without voting (an observer).
 * The combination is checked against the voters at startup.
 */
import { MqError } from '@mq/protocol/errors';
import { parseVoters } from './options.js';

export interface ProcessRoles {
  readonly broker: boolean;
  readonly controller: boolean;
}

export interface RolesInput {
  brokerId: number;
  /** `process.roles` as configured ('' = derive it). */
  roles: string;
  /** `controller.quorum.voters`. */
  voters: string;
  /** `controller.quorum.bootstrap.servers`. */
  bootstrapServers: string;
  /** `controller.raft.address`: set on a controller that joins a running quorum (not in the voters). */
  raftAddress?: string;
}

/** `host:port` entries of `controller.quorum.bootstrap.servers`. */
export function parseBootstrapServers(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(.+):(\d+)$/.exec(part);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) {
      throw new MqError('INVALID_CONFIG', `controller.quorum.bootstrap.servers: "${part}" is not host:port of a controller's client port (e.g. 127.0.0.1:9093)`);
    }
    out.push(part);
  }
  return out;
}

export function formatRoles(r: ProcessRoles): string {
  return [r.broker ? 'broker' : '', r.controller ? 'controller' : ''].filter(Boolean).join(',');
}

/** Parses and checks `process.roles` against the voters; INVALID_CONFIG with what to change. */
export function parseProcessRoles(input: RolesInput): ProcessRoles {
  const voters = input.voters.trim() ? parseVoters(input.voters) : [];
  const bootstrap = parseBootstrapServers(input.bootstrapServers);
  const isVoter = voters.some((v) => v.id === input.brokerId);
  const joining = !isVoter && (input.raftAddress ?? '').trim() !== '';
  const listed = voters.map((v) => v.id).join(', ');
  let roles: ProcessRoles;
  const text = input.roles.trim();
  if (text === '') {
    if (isVoter || joining) roles = { broker: true, controller: true };
    else if (bootstrap.length > 0) roles = { broker: true, controller: false };
    else {
      throw new MqError(
        'INVALID_CONFIG',
        `broker ${input.brokerId} is not in controller.quorum.voters (${listed}): make it a voter, or run it as a broker-only process with process.roles=broker and controller.quorum.bootstrap.servers=<controller host:port,...>`,
      );
    }
  } else {
    const parts = text.split(',').map((s) => s.trim());
    const unknown = parts.filter((p) => p !== 'broker' && p !== 'controller');
    if (unknown.length > 0 || parts.length === 0 || new Set(parts).size !== parts.length) {
      throw new MqError('INVALID_CONFIG', `process.roles "${text}" must be broker, controller or broker,controller`);
    }
    roles = { broker: parts.includes('broker'), controller: parts.includes('controller') };
  }
  if (roles.controller && !isVoter && !joining) {
    throw new MqError(
      'INVALID_CONFIG',
      `process.roles=${formatRoles(roles)} but broker ${input.brokerId} is not in controller.quorum.voters (${listed || 'empty'}): a controller is a Raft voter; add ${input.brokerId}@host:raftPort to the voters, set controller.raft.address=host:raftPort to join a running quorum (then mq controller add-voter), or use process.roles=broker`,
    );
  }
  if (roles.controller && joining && voters.length === 0) {
    throw new MqError('INVALID_CONFIG', `a controller joining a running quorum (controller.raft.address) needs controller.quorum.voters: the quorum's founding voters, as every member lists them`);
  }
  if (!roles.controller && joining) {
    throw new MqError('INVALID_CONFIG', `controller.raft.address is set but process.roles=${formatRoles(roles)} has no controller role: drop it, or use process.roles=controller`);
  }
  if (!roles.controller && isVoter) {
    throw new MqError(
      'INVALID_CONFIG',
      `process.roles=broker but broker ${input.brokerId} is listed in controller.quorum.voters (${listed}): a broker-only process does not vote; remove it from the voters or use process.roles=broker,controller`,
    );
  }
  if (!roles.controller && bootstrap.length === 0) {
    throw new MqError(
      'INVALID_CONFIG',
      'process.roles=broker needs controller.quorum.bootstrap.servers (host:port of the controllers\' client ports) to follow the metadata log',
    );
  }
  return Object.freeze(roles);
}
