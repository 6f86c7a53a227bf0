export { createNatsTarget, NATS_DEFAULT_DURABILITY } from './nats.js';
export { createRedisTarget, REDIS_DEFAULT_DURABILITY } from './redis.js';
export { createRabbitTarget, RABBIT_DEFAULT_DURABILITY } from './rabbitmq.js';

export type { NatsTargetOptions } from './nats.js';
export type { RedisTargetOptions } from './redis.js';
export type { RabbitTargetOptions } from './rabbitmq.js';
