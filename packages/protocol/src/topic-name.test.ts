import { collisionKey, validateTopicName } from './topic-name.js';

describe('topic names (Kafka rules)', () => {
  it.each(['a', 'orders', 'a.b_c-D9', 'x'.repeat(249)])('accepts %s', (n) => {
    expect(validateTopicName(n)).toBe(n);
  });

  it.each(['', '.', '..', 'x'.repeat(250), 'a b', 'a/b', 'ü', '../etc', 'a\u0000'])('refuses %j with INVALID_TOPIC', (n) => {
    expect(() => validateTopicName(n)).toThrow(expect.objectContaining({ code: 'INVALID_TOPIC' }));
  });

  it('treats . and _ as colliding', () => {
    expect(collisionKey('a.b')).toBe(collisionKey('a_b'));
    expect(collisionKey('a.b')).not.toBe(collisionKey('a-b'));
  });
});
