/**
 * The metadata invariant: the topics and brokers a cluster lists change only as
 * clients were told they did. Topics the fuzzer's own CreateTopics/DeleteTopics
 * frames were answered as created/deleted are allowed; anything else (a topic
 * nobody was told was created, a vanished topic, a changed broker list, a new
 * topic with a name outside the topic-name rule) is a violation.
 */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

export async function snapshotMetadata(admin) {
  const topics = (await admin.listTopics()).filter((t) => !t.startsWith('__'));
  const cluster = await admin.describeCluster();
  const brokers = cluster.brokers.map((b) => `${b.id}@${b.host}:${b.port}`).sort();
  return { topics: new Set(topics), brokers };
}

export function compareMetadata(before, after, { created, deleted, refused, steadyTopic, steadyPartitions, steadyActual }) {
  const problems = [];
  for (const t of after.topics) {
    if (before.topics.has(t)) continue;
    if (!created.has(t)) problems.push(`topic ${JSON.stringify(t)} appeared but no CreateTopics was answered as creating it${refused.has(t) ? ` (CreateTopics was answered: ${refused.get(t)})` : ''}`);
    else if (!TOPIC_NAME.test(t) || t === '.' || t === '..') problems.push(`topic ${JSON.stringify(t)} was created with a name outside the topic-name rule`);
  }
  for (const t of before.topics) if (!after.topics.has(t) && !deleted.has(t)) problems.push(`topic ${JSON.stringify(t)} vanished but no DeleteTopics was answered as deleting it${refused.has(t) ? ` (DeleteTopics was answered: ${refused.get(t)})` : ''}`);
  if (!after.topics.has(steadyTopic)) problems.push(`the well-behaved client's topic ${steadyTopic} is gone`);
  if (steadyActual !== steadyPartitions) problems.push(`the well-behaved client's topic has ${steadyActual} partitions, not ${steadyPartitions}`);
  if (before.brokers.join(',') !== after.brokers.join(',')) problems.push(`brokers changed: [${before.brokers}] -> [${after.brokers}]`);
  return problems;
}
