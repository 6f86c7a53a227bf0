/**
 * HTTP routes of the controller quorum (KIP-853 on mq), answering what the
 * wire API answers through this broker's own handlers (DescribeQuorum and
 * AlterRaftVoters, handlers/): the members with their lag, adding a
 * controller (learner, then voter once caught up) and removing one.
 */
import type { Router } from '../router.js';
import type { TopicBackend } from '../backends/types.js';

const controllerId = { type: 'integer', minimum: 1, maximum: 2147483647 };
const idList = { type: 'array', items: { type: 'integer' } };
const membership = {
  type: 'object',
  required: ['voters', 'learners'],
  properties: { voters: idList, learners: idList },
};
const quorum = {
  type: 'object',
  required: ['leader_id', 'term', 'high_watermark', 'members'],
  properties: {
    leader_id: { type: 'integer', description: 'The active controller (-1: none)' },
    term: { type: 'integer' },
    high_watermark: { type: 'integer', description: "The metadata log's commit index" },
    members: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'address', 'voter', 'log_end', 'lag', 'recently_active'],
        properties: {
          id: { type: 'integer' },
          address: { type: 'string', description: "host:port of its Raft listener ('' when unknown)" },
          voter: { type: 'boolean', description: 'false: a learner still catching up' },
          log_end: { type: 'integer' },
          lag: { type: 'integer', description: "Entries behind the active controller's log" },
          recently_active: { type: 'boolean' },
        },
      },
    },
  },
};

export function registerQuorumRoutes(router: Router, backend: TopicBackend): void {
  router.add(
    'GET',
    '/controller/quorum',
    {
      operationId: 'describeQuorum',
      summary: 'The metadata quorum as the active controller sees it: leader, term, commit index, and each voter and learner with its Raft address and lag',
      responses: { 200: { description: 'The quorum', schema: quorum } },
      errors: [503],
    },
    async () => {
      const r = await backend.request(backend.brokerId, 'describeQuorum', {});
      return {
        status: 200,
        body: {
          leader_id: r.leaderId ?? -1,
          term: r.leaderEpoch ?? -1,
          high_watermark: Number(r.highWatermark ?? -1),
          members: (r.members ?? []).map((m) => ({ id: m.id ?? 0, address: m.address ?? '', voter: m.voter ?? false, log_end: Number(m.logEnd ?? 0), lag: Number(m.lag ?? 0), recently_active: m.recentlyActive ?? false })),
        },
      };
    },
  );

  router.add(
    'POST',
    '/controller/voters',
    {
      operationId: 'addVoter',
      summary: 'Add a controller to the metadata quorum (mq controller add-voter): a learner until it has caught up, then a voter',
      description:
        'The controller must be running with controller.raft.address set to `address`. One change at a time: 503 VOTER_CHANGE_IN_PROGRESS while another is not done; ' +
        '409 DUPLICATE_VOTER when it already votes; 400 ABORTED when it did not catch up within timeout_ms (it is removed again).',
      body: {
        required: true,
        schema: {
          type: 'object',
          required: ['id', 'address'],
          additionalProperties: false,
          properties: {
            id: controllerId,
            address: { type: 'string', minLength: 3, maxLength: 300, description: "host:port of the controller's Raft listener" },
            timeout_ms: { type: 'integer', minimum: 1, maximum: 600000, default: 60000 },
          },
        },
      },
      responses: { 200: { description: 'The membership after the change', schema: membership } },
      errors: [409, 503],
    },
    async (req) => {
      const body = req.input.body as { id: number; address: string; timeout_ms: number };
      const r = await backend.request(backend.brokerId, 'alterRaftVoters', { voterId: body.id, address: body.address, remove: false, timeoutMs: body.timeout_ms });
      return { status: 200, body: { voters: r.voters ?? [], learners: r.learners ?? [] } };
    },
  );

  router.add(
    'DELETE',
    '/controller/voters/{id}',
    {
      operationId: 'removeVoter',
      summary: 'Remove a controller (voter or learner) from the metadata quorum (mq controller remove-voter); stop its process afterwards',
      description: '400 UNKNOWN_NODE when it is not a member, or when it is the last voter; 503 VOTER_CHANGE_IN_PROGRESS while another change is not done.',
      params: { id: { schema: controllerId } },
      responses: { 200: { description: 'The membership after the change', schema: membership } },
      errors: [503],
    },
    async (req) => {
      const id = req.input.params.id as number;
      const r = await backend.request(backend.brokerId, 'alterRaftVoters', { voterId: id, remove: true, timeoutMs: 30_000 });
      return { status: 200, body: { voters: r.voters ?? [], learners: r.learners ?? [] } };
    },
  );
}
