/**
 * The cluster's IncrementalAlterConfigs (through the controller: an
 * alterTopicConfigs command in the metadata log, which every broker hosting
 * the topic applies to its partition logs) and DeleteRecords (on the leader
 * of each partition; followers learn the new log start from their fetches).
 */
import { MqError } from '@mq/protocol/errors';
import { alterTopicConfigs, sameTopicConfigs } from '../config/alter-topic-configs.js';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import type { MetadataState } from '../controller/metadata-state.js';
import { deleteRecordsOf, perDeleteRecordsPartition } from '../handlers/delete-records.js';
import { perConfigResource } from '../handlers/incremental-alter-configs.js';
import type { HandlerMap } from '../handlers/types.js';
import { requestDeadline } from '../request-limits.js';
import { refuseInternal } from '../topics/topic-name.js';
import { notLeader, type ClusterHandlerDeps } from './handlers.js';

/** Most a change waits to be applied on this broker before it answers. */
const APPLY_WAIT_MS = 5000;

/** Resolves once `ready()` holds on this broker's metadata, or after `timeoutMs`. */
function whenApplied(md: MetadataState, ready: () => boolean, timeoutMs: number): Promise<void> {
  if (ready()) return Promise.resolve();
  return new Promise((resolve) => {
    const off = md.onChange(() => {
      if (ready()) done();
    });
    const timer = setTimeout(done, timeoutMs);
    function done() {
      clearTimeout(timer);
      off();
      resolve();
    }
  });
}

export function clusterAdminHandlers(d: ClusterHandlerDeps): HandlerMap {
  const md = d.controller.metadata;
  const limits = commandLimitsOf(d.config);
  return {
    incrementalAlterConfigs: (req, ctx) => {
      const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
      return perConfigResource(req, ctx, async (name, set, remove, validateOnly) => {
        const t = md.topic(name);
        if (!t) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
        const configs = alterTopicConfigs(t.configs, set, remove, d.config.int('max.frame.bytes'));
        const checkedSet = Object.fromEntries(Object.keys(set).map((k) => [k, configs[k]!]));
        const command = checkCommand({ type: 'alterTopicConfigs', name, topicId: t.topicId, set: checkedSet, delete: remove }, md, limits);
        if (validateOnly) return configs;
        const v = (await d.controller.submit(command, deadline.check())) as { configs: Record<string, string> };
        const applied = () => {
          const now = md.topic(name);
          return !now || now.topicId !== t.topicId || sameTopicConfigs(now.configs, v.configs);
        };
        await whenApplied(md, applied, Math.min(APPLY_WAIT_MS, deadline.remaining()));
        // This broker's partitions of the topic take the new options before the answer.
        await d.replicas.settled();
        return v.configs;
      });
    },

    deleteRecords: (req, ctx) =>
      perDeleteRecordsPartition(req, ctx, async (topic, index, offset) => {
        refuseInternal(topic, 'delete records of');
        const leader = d.replicas.leaderOf(topic, index);
        const hosted = d.replicas.hostedPartition(topic, index);
        if (!leader || !hosted) throw notLeader(d, topic, index);
        return deleteRecordsOf({ name: `${topic}-${index}`, highWatermark: leader.highWatermark, log: hosted.log }, offset);
      }),
  };
}

