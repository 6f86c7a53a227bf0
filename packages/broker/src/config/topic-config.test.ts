import { BrokerConfig } from './broker-config.js';
import { parseProperties } from './config-def.js';
import { logOptionsFor, TopicConfig, validateTopicConfigs } from './topic-config.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'no error';
};

describe('topic configs', () => {
  const broker = new BrokerConfig({ 'log.flush.policy': 'always', 'message.max.bytes': '2000' });

  it('accepts the documented keys and normalises values', () => {
    const c = validateTopicConfigs(
      { 'retention.ms': ' 1000 ', 'flush.policy': 'INTERVAL', 'message.timestamp.type': 'logappendtime', 'min.insync.replicas': 2 },
      1 << 24,
    );
    expect(c).toEqual({ 'retention.ms': '1000', 'flush.policy': 'interval', 'message.timestamp.type': 'LogAppendTime', 'min.insync.replicas': '2' });
  });

  it.each([
    [{ 'retention.msx': '1' }],
    [{ 'retention.ms': 'soon' }],
    [{ 'retention.ms': '-2' }],
    [{ 'segment.bytes': '99999999999' }],
    [{ 'flush.policy': 'sometimes' }],
    [{ 'cleanup.policy': 'shred' }],
    [{ 'min.insync.replicas': '0' }],
    [{ 'max.message.bytes': String(1 << 24) }],
  ])('refuses %j with INVALID_CONFIG', (input) => {
    expect(code(() => validateTopicConfigs(input, 1 << 24))).toBe('INVALID_CONFIG');
  });

  it('inherits broker defaults and reports where each value comes from', () => {
    const t = new TopicConfig({ 'retention.ms': '5' }, broker);
    expect(t.get('retention.ms')).toBe('5');
    expect(t.source('retention.ms')).toBe('topic');
    expect(t.get('flush.policy')).toBe('always');
    expect(t.source('flush.policy')).toBe('broker');
    expect(t.source('segment.ms')).toBe('default');
    expect(t.maxMessageBytes).toBe(2000);
  });

  it('maps flush policies to the log options', () => {
    expect(logOptionsFor(new TopicConfig({}, broker)).flush).toEqual({ policy: 'always' });
    expect(logOptionsFor(new TopicConfig({ 'flush.policy': 'os' }, broker)).flush).toEqual({ policy: 'os' });
    expect(
      logOptionsFor(new TopicConfig({ 'flush.policy': 'interval', 'flush.interval.ms': '50', 'flush.interval.bytes': '4096' }, broker)).flush,
    ).toEqual({ policy: 'interval', intervalMs: 50, intervalBytes: 4096 });
  });

  it('refuses unknown broker keys', () => {
    expect(code(() => new BrokerConfig({ 'num.partitionz': '3' }))).toBe('INVALID_CONFIG');
  });

  it('parses properties files and reports the bad line', () => {
    expect(parseProperties('# c\n a = 1\nb:2\n\n! x\nc=x=y\n')).toEqual({ a: '1', b: '2', c: 'x=y' });
    expect(() => parseProperties('a=1\nnonsense\n', 'f.properties')).toThrow(/f.properties:2/);
  });
});
