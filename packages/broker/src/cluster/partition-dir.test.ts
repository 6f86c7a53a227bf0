import path from 'node:path';
import { MAX_FILE_NAME_BYTES, parsePartitionDirName, partitionDirName } from './partition-dir.js';

describe('partitionDirName', () => {
  it('names the cluster accepts but cannot serve: a 249-character topic gets a directory (and .hw file) within 255 bytes, unique by topic id', () => {
    const long = 'a'.repeat(249);
    const a = partitionDirName(long, 2_147_483_646, 'A'.repeat(32));
    const b = partitionDirName(long, 2_147_483_646, 'B'.repeat(32));
    expect(Buffer.byteLength(`${a}.hw`)).toBeLessThanOrEqual(MAX_FILE_NAME_BYTES);
    expect(a).not.toBe(b);
    expect(partitionDirName('orders', 3, 'xyz')).toBe('orders-3.xyz');
  });

  it('path traversal: never a raw string as a path (the name and id rules are checked here too)', () => {
    for (const [topic, id] of [['../../x', 'id'], ['..', 'id'], ['a/b', 'id'], ['ok', '../x'], ['ok', 'a/b'], ['ok', '']]) {
      expect(() => partitionDirName(topic!, 0, id!)).toThrow();
    }
    expect(path.basename(partitionDirName('a.b_c-d', 0, 'id'))).toBe('a.b_c-d-0.id');
  });
});

describe('parsePartitionDirName', () => {
  it('reads back the topic id (and partition) of a directory or of the checkpoint file beside it', () => {
    const id = 'Ab_9-xYz0123456789abcd';
    const dir = partitionDirName('orders.eu-1', 12, id);
    expect(parsePartitionDirName(dir)).toEqual({ dir, topic: 'orders.eu-1', partition: 12, topicId: id });
    expect(parsePartitionDirName(`${dir}.hw`)).toEqual({ dir, topic: 'orders.eu-1', partition: 12, topicId: id });
    const long = partitionDirName('a'.repeat(249), 3, id);
    expect(parsePartitionDirName(long)?.topicId).toBe(id);
  });

  it('names partitionDirName cannot make are not partition directories', () => {
    for (const name of ['.deleted', 'orders', 'orders-1', 'orders-x.id', 'orders-1.', 'orders-1.a/b', 'orders-1.' + 'a'.repeat(33)]) {
      expect(parsePartitionDirName(name)).toBeUndefined();
    }
  });
});
