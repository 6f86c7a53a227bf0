// A broker assembled from the packages with two parts of its own: every
// partition log is @mq/log-store's behind a wrapper that counts the records
// each partition appended (any implementation of the Log contract can stand
// here; a retried duplicate counts again), and an extra HTTP route serves
// those counts.
import { startBroker, type Broker, type BrokerComponents } from '@mq/broker';
import { openLog, type Log } from '@mq/log-store';

export async function startCountingBroker(dataDir: string): Promise<{ broker: Broker; appended: Map<string, number> }> {
  const appended = new Map<string, number>();

  // The log contract, implemented by delegation: append counts, everything else is the store's.
  const counting = (dir: string, log: Log): Log =>
    new Proxy(log, {
      get(target, prop) {
        if (prop === 'append') {
          return async (...args: Parameters<Log['append']>) => {
            const result = await target.append(...args);
            const partition = dir.split('/').at(-1)!.split('.')[0]!;
            appended.set(partition, (appended.get(partition) ?? 0) + result.lastOffset - result.baseOffset + 1);
            return result;
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });

  const components: BrokerComponents = {
    openLog: async (dir, options) => counting(dir, await openLog(dir, options)),
    routes: [
      (router) =>
        router.add(
          'GET',
          '/appended',
          { operationId: 'appended', summary: 'Records appended per partition', responses: { 200: { description: 'Counts by partition', schema: { type: 'object' } } } },
          async () => ({ status: 200, body: Object.fromEntries(appended) }),
        ),
    ],
  };
  const broker = await startBroker({ dataDir, port: 0, httpPort: 0 }, components);
  return { broker, appended };
}
