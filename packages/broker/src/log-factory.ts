/** The production partition-log factory: @mq/log-store's openLog. */
import type { Logger } from 'pino';
import { openLog } from '@mq/log-store';
import type { OpenLog, PartitionLog } from './topics/partition-log.js';

export function logStoreFactory(logger: Logger): OpenLog {
  return async (dir, options) => (await openLog(dir, options, { logger: logger.child({ log: dir }) })) as PartitionLog;
}
