/**
 * A controller of a cluster records its inter-broker listener in the
 * metadata (RegisterController, as KIP-919), so that brokers configured
 * before it existed find it there.
 */
import type { Logger } from 'pino';
import { isMqError } from '@mq/protocol/errors';
import type { RegisterControllerCommand } from '../../controller/commands.js';
import type { Controller } from '../../controller/controller.js';

export interface ControllerEndpointComponents {
  controller: Pick<Controller, 'submit' | 'metadata'>;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Aborted when the node closes: the loop stops. */
  closing: AbortSignal;
}

/**
 * Submits `command` until it commits (the same record again is a no-op). A
 * refusal other than a timeout ends it: brokers then find this controller
 * only through their bootstrap servers.
 */
export async function registerControllerEndpoint(command: RegisterControllerCommand, c: ControllerEndpointComponents): Promise<void> {
  const { controller, logger: log, closing } = c;
  const current = controller.metadata.controllerEndpoint(command.id);
  if (current?.host === command.host && current.port === command.port) return;
  let failures = 0;
  while (!closing.aborted) {
    try {
      await controller.submit(command, 10_000);
      log.info({ host: command.host, port: command.port }, 'controller endpoint registered in the metadata (brokers reach this controller there)');
      return;
    } catch (err) {
      if (closing.aborted) return;
      const code = isMqError(err) ? err.code : 'UNKNOWN';
      if (code !== 'REQUEST_TIMED_OUT') {
        log.warn({ code, err: (err as Error).message }, "this controller's endpoint was refused by the active controller: brokers find it only through their bootstrap servers");
        return;
      }
      // Not a member yet (a controller waiting for add-voter), or no quorum: said now and then.
      if (failures++ % 6 === 0) log.info({ code, err: (err as Error).message }, "this controller's endpoint is not in the metadata yet; retrying");
    }
  }
}
