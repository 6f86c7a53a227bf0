import { DEFAULT_CONTROLLER_TICK_MS, DEFAULT_SESSION_TIMEOUT_MS, parseControllerOptions, parseVoters, quorumClusterId } from './options.js';
import { BROKER_CONFIG } from '../config/broker-config.js';
import { parsePeerAddresses } from '../cluster/peer-connections.js';

describe('controller options', () => {
  it('parses voters', () => {
    expect(parseVoters('1@127.0.0.1:19091, 2@localhost:19092')).toEqual([
      { id: 1, host: '127.0.0.1', port: 19091 },
      { id: 2, host: 'localhost', port: 19092 },
    ]);
  });

  it.each([
    ['1@127.0.0.1', /not id@host:port/],
    ['x@127.0.0.1:1', /not id@host:port/],
    ['1@h:1,1@h:2', /listed twice/],
    ['0@h:1', /must be positive/],
    ['1@h:70000', /not a port/],
  ])('refuses voters %s', (text, message) => {
    expect(() => parseVoters(text)).toThrow(message);
  });

  it('requires this broker among the voters and a session of at least 15 ticks', () => {
    expect(() => parseControllerOptions({ brokerId: 4, voters: '1@h:1,2@h:2' })).toThrow(/broker 4 is not in controller.quorum.voters/);
    expect(() => parseControllerOptions({ brokerId: 1, voters: '1@h:1', tickMs: 100, sessionTimeoutMs: 1000 })).toThrow(/at least 15 Raft ticks/);
    const o = parseControllerOptions({ brokerId: 1, voters: '1@h:1' });
    expect(o).toMatchObject({ tickMs: DEFAULT_CONTROLLER_TICK_MS, sessionTimeoutMs: DEFAULT_SESSION_TIMEOUT_MS, autoLeaderRebalance: true, fsync: true });
    // The broker configuration's defaults are these (written out there: the config module cannot import this one).
    expect(BROKER_CONFIG.get('controller.tick.ms')?.default).toBe(String(DEFAULT_CONTROLLER_TICK_MS));
    expect(BROKER_CONFIG.get('broker.session.timeout.ms')?.default).toBe(String(DEFAULT_SESSION_TIMEOUT_MS));
    expect(DEFAULT_SESSION_TIMEOUT_MS).toBeGreaterThanOrEqual(15 * DEFAULT_CONTROLLER_TICK_MS);
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('parses peer address overrides', () => {
    expect([...parsePeerAddresses('2@127.0.0.1:7002,3@127.0.0.1:7003')]).toEqual([
      [2, '127.0.0.1:7002'],
      [3, '127.0.0.1:7003'],
    ]);
    expect(() => parsePeerAddresses('2=127.0.0.1:7002')).toThrow(/not id@host:port/);
  });

  it('forged Raft peers: the Raft Hello names the quorum\'s own cluster id, not a constant', () => {
    const id = quorumClusterId(parseVoters('1@127.0.0.1:9001,2@127.0.0.1:9002,3@127.0.0.1:9003'));
    // The same quorum as another voter sees it (its peers behind other ports, listed in another order).
    expect(quorumClusterId(parseVoters('3@127.0.0.1:7003,1@127.0.0.1:7001,2@127.0.0.1:7002'))).toBe(id);
    expect(quorumClusterId(parseVoters('1@127.0.0.1:9001,2@127.0.0.1:9002,4@127.0.0.1:9003'))).not.toBe(id);
    expect(quorumClusterId(parseVoters('1@10.0.0.1:9001,2@127.0.0.1:9002,3@127.0.0.1:9003'))).not.toBe(id);
    expect(id).not.toBe('mq-metadata');
  });
});
