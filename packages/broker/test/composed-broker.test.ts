/**
 * "Composing your own broker" (issue 13): the broker README's example,
 * test/examples/composed-broker.ts, runs: a broker with its own log wrapper
 * and an extra HTTP route serves a real client, and the README shows exactly
 * that file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MqClient } from '@mq/client';
import { startCountingBroker } from './examples/composed-broker.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('composing your own broker (README example)', () => {
  it('the README shows the example file as it is', async () => {
    const readme = await readFile(path.join(here, '..', 'README.md'), 'utf8');
    const example = await readFile(path.join(here, 'examples', 'composed-broker.ts'), 'utf8');
    expect(readme).toContain('```ts\n' + example + '```');
  });

  it('serves a client through its own log wrapper and route', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-composed-'));
    const { broker, appended } = await startCountingBroker(dataDir);
    const client = new MqClient({ bootstrap: `127.0.0.1:${broker.port}`, clientId: 'composed' });
    try {
      await client.admin().createTopic('composed', { numPartitions: 2, replicationFactor: 1 });
      const producer = client.producer();
      for (let i = 0; i < 6; i++) await producer.send('composed', { value: `v${i}`, partition: i % 2 });
      await producer.close();
      expect([appended.get('composed-0'), appended.get('composed-1')]).toEqual([3, 3]);
      const res = await fetch(`http://127.0.0.1:${broker.httpPort}/appended`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ 'composed-0': 3, 'composed-1': 3 });
    } finally {
      await client.close();
      await broker.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
