/**
 * The CLI's transactions against a real broker process: `mq produce
 * --transactional-id ID --txn-records N` commits one transaction per N lines
 * and aborts the open one at a bad line; `mq consume --isolation-level
 * read_committed` reads only the committed transactions, read_uncommitted
 * everything written.
 */
import { cleanup, runCli, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await cleanup();
});

const mq = (args: string[], input?: string) => runCli([...args, '--bootstrap', broker.bootstrap], { input });

it('produce in transactions, a bad line aborts the open one; consume read_committed sees only the committed ones', async () => {
  const topic = uniqueName('cli-txn');
  expect((await mq(['topic', 'create', topic, '--partitions', '1'])).code).toBe(0);
  const input = ['{"value":"a"}', '{"value":"b"}', '{"value":"c"}', '{"value":"d"}', '{"value":"e"}', 'not json', '{"value":"f"}'].join('\n') + '\n';
  const produced = await mq(['produce', topic, '--input', 'json', '--transactional-id', uniqueName('cli-tx'), '--txn-records', '2'], input);
  expect(produced.code).toBe(2);
  expect(produced.stderr).toContain('line 6');
  expect(produced.stderr).toContain('the open transaction was aborted');
  const committed = await mq(['consume', topic, '--from-beginning', '-e', '--isolation-level', 'read_committed']);
  expect(committed.code).toBe(0);
  expect(committed.stdout.trim().split('\n')).toEqual(['a', 'b', 'c', 'd']);
  const all = await mq(['consume', topic, '--from-beginning', '-e', '--isolation-level', 'read_uncommitted']);
  expect(all.stdout.trim().split('\n')).toEqual(['a', 'b', 'c', 'd', 'e']);
  const bad = await mq(['produce', topic, '--txn-records', '2'], 'x\n');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--txn-records needs --transactional-id');
});
