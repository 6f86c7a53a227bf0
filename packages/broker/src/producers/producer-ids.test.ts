import { ProducerIdManager, controllerBlockSource } from './producer-ids.js';

test('controller blocks come from allocateProducerIds', async () => {
  const submitted: unknown[] = [];
  let next = 0;
  const ids = new ProducerIdManager(
    controllerBlockSource(async (c) => {
      submitted.push(c);
      const first = next;
      next += c.count;
      return { firstProducerId: first, count: c.count };
    }, 7, 2),
  );
  expect([await ids.allocate(), await ids.allocate(), await ids.allocate()]).toEqual([0, 1, 2]);
  expect(submitted).toEqual([
    { type: 'allocateProducerIds', brokerId: 7, count: 2 },
    { type: 'allocateProducerIds', brokerId: 7, count: 2 },
  ]);
});
