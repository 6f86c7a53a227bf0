/** Kafka's config resource types that mq has: topics and brokers. */
export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;

/** Kafka's config sources (DescribeConfigs v1+) for mq's "topic", "broker" and "default". */
export function configSource(source: string | null | undefined, resourceType: number): number {
  if (source === 'topic') return 1; // DYNAMIC_TOPIC_CONFIG
  if (source === 'broker') return resourceType === RESOURCE_BROKER ? 4 : 5; // STATIC_BROKER_CONFIG / DEFAULT_CONFIG seen from a topic
  return 5; // DEFAULT_CONFIG
}
