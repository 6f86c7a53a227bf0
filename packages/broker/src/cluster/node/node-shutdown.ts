/**
 * How a cluster node stops: a broker first asks the controller to fence it
 * (controlled shutdown, so its partitions get new leaders now rather than
 * after the session timeout), then its replicas close, then the connections
 * to the other brokers, the controller and the controller channel, and last
 * the registrations still under way end.
 */
import type { Logger } from 'pino';
import { CONTROLLED_SHUTDOWN } from '../../controller/metadata-state.js';
import type { Controller } from '../../controller/controller.js';

/** Best effort (there may be no quorum left): fences this broker's run, if it registered and a controller is known. */
export async function controlledShutdown(controller: Pick<Controller, 'submit' | 'controllerId'>, brokerId: number, brokerEpoch: number, log: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  if (brokerEpoch < 0 || controller.controllerId <= 0) return;
  try {
    await controller.submit({ type: 'fenceBroker', id: brokerId, brokerEpoch, reason: CONTROLLED_SHUTDOWN }, 2000);
    log.info('controlled shutdown: fenced, partition leadership moved to other brokers');
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'controlled shutdown: could not reach the controller; others take over after the session timeout');
  }
}

export interface NodeParts {
  /** Present when the process is a broker: fences it first. */
  fence?: () => Promise<void>;
  replicas: { close(): Promise<void> };
  peers: { close(): void };
  controller: { close(): Promise<void> };
  channel?: { close(): void } | undefined;
  /** Registrations under way (they stop once the node is closing). */
  registrations: readonly (() => Promise<void>)[];
}

/** Closes the parts in order (see the top of this file). */
export async function closeNode(p: NodeParts): Promise<void> {
  await p.fence?.();
  await p.replicas.close();
  p.peers.close();
  await p.controller.close();
  p.channel?.close();
  for (const settled of p.registrations) await settled();
}
