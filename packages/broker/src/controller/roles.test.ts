import { formatRoles, parseBootstrapServers, parseProcessRoles } from './roles.js';

const voters = '1@127.0.0.1:19091,2@127.0.0.1:19092,3@127.0.0.1:19093';
const bootstrap = '127.0.0.1:9093,127.0.0.1:9094';

describe('process.roles', () => {
  it('defaults to broker,controller for a voter and to broker for a non-voter with bootstrap servers', () => {
    expect(parseProcessRoles({ brokerId: 2, roles: '', voters, bootstrapServers: '' })).toEqual({ broker: true, controller: true });
    expect(parseProcessRoles({ brokerId: 4, roles: '', voters: '', bootstrapServers: bootstrap })).toEqual({ broker: true, controller: false });
    expect(parseProcessRoles({ brokerId: 4, roles: '', voters, bootstrapServers: bootstrap })).toEqual({ broker: true, controller: false });
  });

  it('lets a controller outside the voters join a running quorum with controller.raft.address', () => {
    expect(parseProcessRoles({ brokerId: 4, roles: 'controller', voters, bootstrapServers: bootstrap, raftAddress: '127.0.0.1:19094' })).toEqual({ broker: false, controller: true });
    expect(parseProcessRoles({ brokerId: 4, roles: '', voters, bootstrapServers: '', raftAddress: '127.0.0.1:19094' })).toEqual({ broker: true, controller: true });
    expect(() => parseProcessRoles({ brokerId: 4, roles: 'broker', voters, bootstrapServers: bootstrap, raftAddress: '127.0.0.1:19094' })).toThrow(/controller.raft.address is set but process.roles=broker has no controller role/);
    expect(() => parseProcessRoles({ brokerId: 4, roles: 'controller', voters: '', bootstrapServers: bootstrap, raftAddress: '127.0.0.1:19094' })).toThrow(/needs controller.quorum.voters/);
  });

  it('accepts each role in either order', () => {
    expect(parseProcessRoles({ brokerId: 1, roles: 'controller', voters, bootstrapServers: '' })).toEqual({ broker: false, controller: true });
    expect(parseProcessRoles({ brokerId: 1, roles: 'controller, broker', voters, bootstrapServers: '' })).toEqual({ broker: true, controller: true });
    expect(parseProcessRoles({ brokerId: 5, roles: 'broker', voters, bootstrapServers: bootstrap })).toEqual({ broker: true, controller: false });
    expect(formatRoles({ broker: true, controller: true })).toBe('broker,controller');
  });

  it.each([
    [{ brokerId: 4, roles: '', voters, bootstrapServers: '' }, /broker 4 is not in controller.quorum.voters .*process.roles=broker and controller.quorum.bootstrap.servers/],
    [{ brokerId: 4, roles: 'controller', voters, bootstrapServers: '' }, /process.roles=controller but broker 4 is not in controller.quorum.voters/],
    [{ brokerId: 4, roles: 'broker,controller', voters, bootstrapServers: '' }, /a controller is a Raft voter/],
    [{ brokerId: 2, roles: 'broker', voters, bootstrapServers: bootstrap }, /process.roles=broker but broker 2 is listed in controller.quorum.voters/],
    [{ brokerId: 4, roles: 'broker', voters, bootstrapServers: '' }, /needs controller.quorum.bootstrap.servers/],
    [{ brokerId: 1, roles: 'leader', voters, bootstrapServers: '' }, /must be broker, controller or broker,controller/],
    [{ brokerId: 1, roles: 'broker,broker', voters, bootstrapServers: '' }, /must be broker, controller or broker,controller/],
    [{ brokerId: 4, roles: 'broker', voters: '', bootstrapServers: '127.0.0.1' }, /not host:port/],
  ])('refuses %j', (input, message) => {
    expect(() => parseProcessRoles(input)).toThrow(message);
    try {
      parseProcessRoles(input);
    } catch (err) {
      expect((err as { code: string }).code).toBe('INVALID_CONFIG');
    }
  });

  it('parses bootstrap servers', () => {
    expect(parseBootstrapServers(' 127.0.0.1:9093, localhost:9094 ')).toEqual(['127.0.0.1:9093', 'localhost:9094']);
    expect(() => parseBootstrapServers('h:0')).toThrow(/not host:port/);
  });
});
