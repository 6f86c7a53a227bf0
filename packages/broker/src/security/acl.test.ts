import { aclsAllow, authorizationError, parseAcl, type AclEntry } from './acl.js';

const acl = (o: Partial<AclEntry>): AclEntry => parseAcl({ resourceType: 'topic', resourceName: 'orders', patternType: 'literal', principal: 'User:alice', operation: 'read', permission: 'allow', ...o });

describe('ACL decisions', () => {
  it('nothing is allowed without a matching allow', () => {
    expect(aclsAllow([], 'User:alice', 'read', 'topic', 'orders')).toBe(false);
    expect(aclsAllow([acl({})], 'User:bob', 'read', 'topic', 'orders')).toBe(false);
    expect(aclsAllow([acl({})], 'User:alice', 'write', 'topic', 'orders')).toBe(false);
    expect(aclsAllow([acl({})], 'User:alice', 'read', 'group', 'orders')).toBe(false);
    expect(aclsAllow([acl({})], 'User:alice', 'read', 'topic', 'orders2')).toBe(false);
  });

  it('literal, prefixed, wildcard name and wildcard principal', () => {
    expect(aclsAllow([acl({})], 'User:alice', 'read', 'topic', 'orders')).toBe(true);
    expect(aclsAllow([acl({ patternType: 'prefixed', resourceName: 'ord' })], 'User:alice', 'read', 'topic', 'orders-eu')).toBe(true);
    expect(aclsAllow([acl({ patternType: 'prefixed', resourceName: 'ord' })], 'User:alice', 'read', 'topic', 'xorders')).toBe(false);
    expect(aclsAllow([acl({ resourceName: '*' })], 'User:alice', 'read', 'topic', 'anything')).toBe(true);
    expect(aclsAllow([acl({ principal: 'User:*' })], 'User:zed', 'read', 'topic', 'orders')).toBe(true);
  });

  it('deny wins over allow, also a deny of all and a deny for everyone', () => {
    expect(aclsAllow([acl({}), acl({ permission: 'deny' })], 'User:alice', 'read', 'topic', 'orders')).toBe(false);
    expect(aclsAllow([acl({ operation: 'all' }), acl({ operation: 'all', permission: 'deny', principal: 'User:*', patternType: 'prefixed', resourceName: 'o' })], 'User:alice', 'write', 'topic', 'orders')).toBe(false);
  });

  it('read, write, delete and alter imply describe; alter-configs implies describe-configs; all covers everything', () => {
    for (const op of ['read', 'write', 'delete', 'alter'] as const) expect(aclsAllow([acl({ operation: op })], 'User:alice', 'describe', 'topic', 'orders')).toBe(true);
    expect(aclsAllow([acl({ operation: 'alter-configs' })], 'User:alice', 'describe-configs', 'topic', 'orders')).toBe(true);
    expect(aclsAllow([acl({ operation: 'describe' })], 'User:alice', 'read', 'topic', 'orders')).toBe(false);
    expect(aclsAllow([acl({ operation: 'all' })], 'User:alice', 'delete', 'topic', 'orders')).toBe(true);
    // a deny of read does not deny describe
    expect(aclsAllow([acl({ operation: 'describe' }), acl({ permission: 'deny' })], 'User:alice', 'describe', 'topic', 'orders')).toBe(true);
  });

  it('refuses malformed ACLs', () => {
    expect(() => acl({ operation: 'fly' as never })).toThrow(/operation/);
    expect(() => acl({ principal: 'alice' })).toThrow(/User:/);
    expect(() => acl({ resourceType: 'cluster', resourceName: 'other' })).toThrow(/cluster/);
    expect(parseAcl({ resourceType: 'cluster', principal: 'User:a', operation: 'alter', permission: 'allow' }).resourceName).toBe('mq-cluster');
  });

  it('refusals carry the resource type\'s error code, not retriable', () => {
    const e = authorizationError('group', 'read', 'g1', 'User:bob');
    expect(e.code).toBe('GROUP_AUTHORIZATION_FAILED');
    expect(e.retriable).toBe(false);
    expect(authorizationError('cluster', 'alter', 'mq-cluster', 'User:bob').code).toBe('CLUSTER_AUTHORIZATION_FAILED');
  });
});
