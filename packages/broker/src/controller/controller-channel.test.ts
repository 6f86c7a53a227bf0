/** ControllerChannel: finds the active controller among the bootstrap addresses, follows NOT_CONTROLLER hints, drops broken connections. */
import { MqError, errorNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { ControllerChannel, type ChannelConnection, type ConnectFn } from './controller-channel.js';

/** Three controllers at a:1, b:2, c:3 (ids 1..3); `active` answers, the others redirect to it. */
function fleet() {
  const state = { active: 2, calls: [] as string[], down: new Set<string>(), opened: 0 };
  const ids: Record<string, number> = { 'a:1': 1, 'b:2': 2, 'c:3': 3 };
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
