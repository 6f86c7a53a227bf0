/** The production partition-log factory: @mq/log-store's openLog, with the broker's logger and clock. */
import type { Logger } from 'pino';
import { openLog, type Log, type LogOptions } from '@mq/log-store';

/**
 * Opens a partition log (the `openLog` broker component). Every partition
 * log, on one broker or as a replica in a cluster, is opened through it.
 */
export type LogOpener = (dir: string, options: LogOptions) => Promise<Log>;

/** @mq/log-store's logs, told the broker's clock (rolling, retention and log-append time) and logger. */
export function logStoreFactory(logger: Logger, clock: () => number = Date.now): LogOpener {
  return (dir, options) => openLog(dir, options, { logger: logger.child({ log: dir }), clock });
}
