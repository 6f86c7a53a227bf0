import { ConfirmTracker } from './confirm-tracker.js';

const state = (p: Promise<void>): Promise<string> =>
  Promise.race([p.then(() => 'resolved', (e: Error) => `rejected: ${e.message}`), new Promise<string>((r) => setImmediate(() => r('pending')))]);

describe('ConfirmTracker', () => {
  it('settles a group only when every id in it is confirmed, in any order', async () => {
    const t = new ConfirmTracker();
    const a = [t.add(), t.add(), t.add()]; // ids 1..3, one group
    t.endGroup();
    const b = t.add(); // id 4, its own group
    expect(a[0]).toBe(a[2]);
    expect(t.pendingGroups).toBe(2);
    t.confirm(3, null);
    t.confirm(1, null);
    expect(await state(a[0])).toBe('pending');
    t.confirm(4, null); // the newer group first
    expect(await state(b)).toBe('resolved');
    t.confirm(2, null);
    expect(await state(a[0])).toBe('resolved');
    expect(t.pendingGroups).toBe(0);
  });

  it('ignores unknown and repeated ids', async () => {
    const t = new ConfirmTracker();
    const p = t.add();
    t.add();
    t.confirm(1, null);
    t.confirm(1, null); // repeated: must not count for id 2
    t.confirm(99, null);
    expect(await state(p)).toBe('pending');
    t.confirm(2, null);
    expect(await state(p)).toBe('resolved');
  });

  it('rejects the whole group when the server refuses one id, and failAll rejects what waits', async () => {
    const t = new ConfirmTracker();
    const p = t.add();
    t.add();
    t.endGroup();
    const q = t.add();
    t.confirm(1, 'publish error 2');
    t.confirm(2, null);
    expect(await state(p)).toBe('rejected: publish error 2');
    t.failAll(new Error('connection closed'));
    expect(await state(q)).toBe('rejected: connection closed');
    expect(t.nextId).toBe(4);
  });
});
