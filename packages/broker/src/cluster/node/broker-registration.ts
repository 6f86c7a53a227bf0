/**
 * A broker's registration with the controller: the RegisterBroker command
 * (endpoints, rack, this run's incarnation, whether the last run shut down
 * cleanly), submitted until it commits. The answer's broker epoch is what
 * this run's heartbeats, ISR proposals and controlled shutdown name.
 */
import type { Logger } from 'pino';
import { isMqError, MqError } from '@mq/protocol/errors';
import { sleep, type Clock, type Timers } from '@mq/protocol/components';
import type { BrokerConfig } from '../../config/broker-config.js';
import type { RegisterBrokerCommand } from '../../controller/commands.js';
import type { Controller } from '../../controller/controller.js';

/** Where this broker is reached: its client, HTTP, inter-broker and Kafka listeners (as RegisterBroker carries them). */
export type BrokerEndpoints = Pick<RegisterBrokerCommand, 'host' | 'port' | 'httpPort' | 'interBrokerPort' | 'kafkaHost' | 'kafkaPort'>;

/** What this run registers: its endpoints, rack, incarnation and how its logs can be trusted. */
export function registerBrokerCommand(o: { brokerId: number; config: BrokerConfig; incarnation: string; cleanShutdown: boolean }, ep: BrokerEndpoints): RegisterBrokerCommand {
  return {
    type: 'registerBroker',
    id: o.brokerId,
    host: ep.host,
    port: ep.port,
    httpPort: ep.httpPort,
    ...(ep.interBrokerPort !== undefined ? { interBrokerPort: ep.interBrokerPort } : {}),
    ...(ep.kafkaPort !== undefined && ep.kafkaHost !== undefined ? { kafkaHost: ep.kafkaHost, kafkaPort: ep.kafkaPort } : {}),
    rack: o.config.get('broker.rack'),
    incarnation: o.incarnation,
    // Whether this broker's logs can be trusted to hold everything it acknowledged (unclean recovery).
    cleanShutdown: o.cleanShutdown,
    flushAlways: o.config.get('log.flush.policy') === 'always',
  };
}

export interface BrokerRegistrationComponents {
  controller: Pick<Controller, 'submit'>;
  /** The cluster node's logger. */
  logger: Pick<Logger, 'info' | 'warn'>;
  clock: Clock;
  timers: Timers;
  /** Aborted when the node closes: the loop stops. */
  closing: AbortSignal;
  /** Called once registered (the replica manager re-checks what waited for this run's registration). */
  onRegistered: () => void;
}

/** This run's registration: submitted once (later calls share it), retried until it commits. */
export class BrokerRegistration {
  /** This run's broker epoch, -1 until registered. */
  private epoch = -1;
  private registering: Promise<void> | undefined;

  constructor(
    private readonly brokerId: number,
    private readonly c: BrokerRegistrationComponents,
  ) {}

  get brokerEpoch(): number {
    return this.epoch;
  }

  /**
   * Registers until it succeeds. DUPLICATE_BROKER_REGISTRATION means another
   * live run holds this id: it may be this broker's own previous run that
   * crashed, which the controller fences once its session expires, so that
   * is retried for `duplicateGraceMs`; refused for longer, a second process
   * really holds the id, and registration fails.
   */
  register(command: RegisterBrokerCommand, duplicateGraceMs: number): Promise<void> {
    this.registering ??= this.loop(command, duplicateGraceMs);
    return this.registering;
  }

  /** Resolves once a registration under way has ended (however it ended). */
  async settled(): Promise<void> {
    await this.registering?.catch(() => undefined);
  }

  private async loop(command: RegisterBrokerCommand, duplicateGraceMs: number): Promise<void> {
    const { controller, logger: log, clock, timers, closing } = this.c;
    let firstRefusal = -1;
    while (!closing.aborted) {
      try {
        const v = (await controller.submit(command, 10_000)) as { brokerEpoch: number };
        this.epoch = v.brokerEpoch;
        log.info({ brokerEpoch: this.epoch, incarnation: command.incarnation }, 'registered with the controller');
        // What waits for this run's registration (the sweep of deleted topics' logs) may have seen it applied before this answer.
        this.c.onRegistered();
        return;
      } catch (err) {
        if (closing.aborted) return;
        const code = isMqError(err) ? (err as MqError).code : 'UNKNOWN';
        if (code === 'DUPLICATE_BROKER_REGISTRATION' && duplicateGraceMs > 0) {
          const now = clock();
          if (firstRefusal < 0) {
            firstRefusal = now;
            log.warn(
              { code, err: (err as Error).message },
              `broker id ${this.brokerId} is held by another live run; if that is this broker's own previous run (a crash), the controller frees the id when its session expires: retrying for up to ${duplicateGraceMs + 2000} ms`,
            );
          } else if (now - firstRefusal > duplicateGraceMs + 2000) {
            throw new MqError(
              'DUPLICATE_BROKER_REGISTRATION',
              `broker id ${this.brokerId} is already registered by another running process (still alive after broker.session.timeout.ms=${duplicateGraceMs}); give this process another broker id or stop the other one`,
              { retriable: false },
            );
          }
        } else {
          log.warn({ code, err: (err as Error).message }, 'registration with the controller failed; retrying');
        }
        await sleep(timers, 500);
      }
    }
  }
}
