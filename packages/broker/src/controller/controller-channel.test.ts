/** ControllerChannel: finds the active controller among the bootstrap addresses, follows NOT_CONTROLLER hints, drops broken connections. */
import { MqError, errorNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { ControllerChannel, type ChannelConnection, type ConnectFn } from './controller-channel.js';

/** Three controllers at a:1, b:2, c:3 (ids 1..3); `active` answers, the others redirect to it. */
function fleet() {
  const state = { active: 2, calls: [] as string[], down: new Set<string>(), opened: 0 };
  const ids: Record<string, number> = { 'a:1': 1, 'b:2': 2, 'c:3': 3, 'e:5': 5, 'f:6': 6 };
  const connect: ConnectFn = async (address) => {
    if (state.down.has(address)) throw new MqError('CONNECTION_ERROR', `${address} refused`);
    state.opened++;
    let closed = false;
    const conn: ChannelConnection = {
      brokerId: ids[address]!,
      get closed() {
        return closed;
      },
      close: () => void (closed = true),
      async request(): Promise<mq.IControllerForwardResponse> {
        state.calls.push(address);
        if (state.down.has(address)) throw new MqError('CONNECTION_CLOSED', 'gone');
        if (ids[address] !== state.active) return { errorCode: errorNumber('NOT_CONTROLLER'), errorMessage: 'not me', controllerId: state.active };
        return { errorCode: 0, controllerId: state.active };
      },
    };
    return conn;
  };
  return { state, connect };
}

describe('ControllerChannel', () => {
  const options = { brokerId: 7, servers: ['a:1', 'b:2', 'c:3'], connectTimeoutMs: 100, maxResponseBytes: 1024 };

  it('follows a NOT_CONTROLLER hint to the active controller and stays there', async () => {
    const f = fleet();
    const ch = new ControllerChannel(options, f.connect);
    const first = await ch.request({}, 100);
    expect(first.errorCode).toBe(errorNumber('NOT_CONTROLLER'));
    expect(ch.controllerHint).toBe(2);
    // The hinted id's address is not known yet: the next address is tried, which is it.
    expect((await ch.request({}, 100)).errorCode).toBe(0);
    expect((await ch.request({}, 100)).errorCode).toBe(0);
    expect(f.state.calls).toEqual(['a:1', 'b:2', 'b:2']);
  });

  it('moves on when the active controller dies, and to the new one when told', async () => {
    const f = fleet();
    const ch = new ControllerChannel(options, f.connect);
    await ch.request({}, 100);
    await ch.request({}, 100); // at b:2 now
    f.state.down.add('b:2');
    f.state.active = 1;
    await expect(ch.request({}, 100)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(ch.controllerHint).toBe(-1);
    // Round robin from where it was: c:3 redirects to 1, whose address (a:1) it learned at the start.
    const r = await ch.request({}, 100);
    expect(r.errorCode).toBe(errorNumber('NOT_CONTROLLER'));
    expect(ch.controllerHint).toBe(1);
    expect((await ch.request({}, 100)).errorCode).toBe(0);
    expect(f.state.calls.slice(-2)).toEqual(['c:3', 'a:1']);
  });

  it('reaches controllers registered in the metadata once every bootstrap server is gone', async () => {
    const f = fleet();
    const registered: { id: number; host: string; port: number }[] = [];
    const ch = new ControllerChannel({ ...options, registered: () => registered }, f.connect);
    await ch.request({}, 100);
    expect((await ch.request({}, 100)).errorCode).toBe(0); // at b:2
    // Controllers 5 and 6 were added and registered; 1, 2 and 3 are gone, 6 is active.
    registered.push({ id: 5, host: 'e', port: 5 }, { id: 6, host: 'f', port: 6 });
    for (const a of ['a:1', 'b:2', 'c:3']) f.state.down.add(a);
    f.state.active = 6;
    await expect(ch.request({}, 100)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    let answered = false;
    for (let i = 0; i < 6 && !answered; i++) {
      const r = await ch.request({}, 100).catch(() => undefined);
      answered = r?.errorCode === 0;
    }
    expect(answered).toBe(true);
    expect(ch.controllerHint).toBe(6);
    // A redirect to a registered controller goes straight to its registered address.
    f.state.active = 5;
    expect((await ch.request({}, 100)).controllerId).toBe(5);
    expect((await ch.request({}, 100)).errorCode).toBe(0);
    expect(f.state.calls.slice(-2)).toEqual(['f:6', 'e:5']);
  });

  it('turns an unreachable address into a retriable CONNECTION_ERROR and refuses after close', async () => {
    const f = fleet();
    f.state.down.add('a:1');
    const ch = new ControllerChannel(options, f.connect);
    await expect(ch.request({}, 100)).rejects.toMatchObject({ code: 'CONNECTION_ERROR', message: expect.stringContaining('a:1') });
    ch.close();
    await expect(ch.request({}, 100)).rejects.toMatchObject({ code: 'CLOSED' });
    expect(() => new ControllerChannel({ ...options, servers: [] }, f.connect)).toThrow(/bootstrap.servers is empty/);
  });
});
