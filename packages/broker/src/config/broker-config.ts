/**
 * The broker's own configuration keys (Kafka names where Kafka has one) and
 * the defaults that topics inherit. Values are strings on the way in; the
 * broker reads them through `BrokerConfig`'s typed getters.
 */
import { DEFAULT_REQUEST_MAX_ENTRIES } from '../server/request-entries.js';
import {
  DEFAULT_GROUP_CREATE_BURST_PER_CONNECTION,
  DEFAULT_GROUP_CREATE_RATE_PER_CONNECTION,
  DEFAULT_GROUP_EMPTY_RETENTION_MS,
  DEFAULT_MAX_GROUPS,
} from '../group/options.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_QUOTA_WINDOW_NUM, DEFAULT_QUOTA_WINDOW_SIZE_SECONDS } from '../quota/options.js';
import { AUTO_BALANCE_MODES, DEFAULT_AUTO_BALANCE } from '../controller/auto-balancer.js';
import { DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS } from '../txn/txn-coordinator.js';
import { defsByName, validateConfigs, type ConfigDef, type ConfigMap } from './config-def.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export const BROKER_CONFIG_DEFS: readonly ConfigDef[] = [
  // Topic defaults (a topic's own config wins).
  { name: 'num.partitions', type: 'int', default: '1', min: 1, doc: 'Partitions of a topic created without a count.' },
  { name: 'default.replication.factor', type: 'int', default: '1', min: 1, doc: 'Replication factor of a topic created without one.' },
  { name: 'log.retention.ms', type: 'long', default: String(7 * DAY_MS), min: -1, doc: 'Default retention.ms.' },
  { name: 'log.retention.bytes', type: 'long', default: '-1', min: -1, doc: 'Default retention.bytes.' },
  { name: 'log.segment.bytes', type: 'int', default: String(1024 * 1024 * 1024), min: 1024, doc: 'Default segment.bytes.' },
  { name: 'log.segment.ms', type: 'long', default: String(7 * DAY_MS), min: 1, doc: 'Default segment.ms.' },
  { name: 'log.index.interval.bytes', type: 'int', default: '4096', min: 0, doc: 'Default index.interval.bytes.' },
  { name: 'log.cleanup.policy', type: 'enum', default: 'delete', values: ['delete', 'compact', 'compact,delete'], doc: 'Default cleanup.policy: delete (time/size retention), compact (keep the latest record per key; retention off) or compact,delete (both).' },
  { name: 'log.cleaner.delete.retention.ms', type: 'long', default: String(DAY_MS), min: 0, doc: 'Default delete.retention.ms: how long a tombstone (null value) survives compaction, so consumers can see the delete.' },
  { name: 'producer.id.expiration.ms', type: 'int', default: String(DAY_MS), min: 1, doc: 'How long a partition remembers an idempotent producer (its epoch and last sequences) after its last batch; a producer idle longer must start over with a new producer id.' },
  { name: 'log.cleaner.interval.ms', type: 'long', default: '15000', min: 10, doc: 'How often the closed segments of compacted topics are compacted.' },
  { name: 'message.max.bytes', type: 'int', default: String(1024 * 1024 + 12), min: 64, doc: 'Default max.message.bytes: largest record batch accepted.' },
  { name: 'log.flush.policy', type: 'enum', default: 'interval', values: ['always', 'interval', 'os'], doc: 'Default flush.policy: always = fsync before acknowledging; interval = fsync every log.flush.interval.ms; os = leave it to the OS.' },
  { name: 'log.flush.interval.ms', type: 'long', default: '1000', min: 1, doc: 'Default flush.interval.ms.' },
  { name: 'log.flush.interval.bytes', type: 'long', default: '-1', min: -1, doc: 'Default flush.interval.bytes (-1: time only).' },
  { name: 'min.insync.replicas', type: 'int', default: '1', min: 1, doc: 'Default min.insync.replicas.' },
  { name: 'log.message.timestamp.type', type: 'enum', default: 'CreateTime', values: ['CreateTime', 'LogAppendTime'], doc: 'Default message.timestamp.type.' },
  // Broker behaviour.
  { name: 'auto.create.topics.enable', type: 'boolean', default: 'false', doc: 'Create unknown topics on produce/metadata (off: a typo should not create a topic).' },
  { name: 'delete.topic.enable', type: 'boolean', default: 'true', doc: 'Allow DeleteTopics.' },
  { name: 'topic.max.partitions', type: 'int', default: '10000', min: 1, doc: 'Largest partition count a topic may have (in a cluster, the active controller\'s value is checked before a command is committed).' },
  { name: 'max.partitions.per.request', type: 'int', default: '1000', min: 1, doc: 'Cluster: the most partitions one CreateTopics or CreatePartitions command may add (INVALID_PARTITIONS beyond; add them in several requests). Bounds what applying one metadata command costs a broker.' },
  { name: 'max.partition.replicas.per.broker', type: 'int', default: '4000', min: 1, doc: 'Cluster: partition replicas allowed per live broker; a command that would put more than this times the live brokers in the cluster is refused with POLICY_VIOLATION.' },
  { name: 'advertised.host', type: 'string', default: '', doc: 'Host name given to clients in Metadata (default: the listen host).' },
  { name: 'kafka.listener.port', type: 'int', default: '-1', min: -1, max: 65535, doc: 'Port of the Kafka-protocol listener (Kafka clients: kafkajs, librdkafka/kcat, @platformatic/kafka), on the listen host; 0: any free port; -1: none. `mq broker start` listens on 9093 for a single broker when neither this nor --kafka-port is set (and starts without it, with a warning, when 9093 is taken); `mq cluster start` gives each broker one.' },
  { name: 'kafka.advertised.listener', type: 'string', default: '', doc: 'host:port Kafka clients are given for this broker in Metadata and FindCoordinator (default: advertised.host and the Kafka listener\'s port).' },
  { name: 'max.frame.bytes', type: 'int', default: String(16 * 1024 * 1024), min: 1024, doc: 'Largest WebSocket message accepted (larger ones close the connection with 1009).' },
  { name: 'fetch.max.bytes', type: 'int', default: String(8 * 1024 * 1024), min: 1024, doc: 'Cap on the records bytes of one fetch response.' },
  { name: 'max.partition.fetch.bytes', type: 'int', default: String(1024 * 1024), min: 1, doc: 'Per-partition fetch size when a request gives none.' },
  { name: 'fetch.max.wait.ms', type: 'int', default: '30000', min: 0, doc: 'Cap on a fetch request\'s max_wait_ms.' },
  { name: 'max.in.flight.requests.per.connection', type: 'int', default: '64', min: 1, doc: 'Requests processed at once per connection; more pause reading.' },
  { name: 'max.in.flight.fetches.per.connection', type: 'int', default: '4', min: 1, doc: 'Fetches processed at once per connection (bounds response memory: this x fetch.max.bytes).' },
  { name: 'connection.max.buffered.bytes', type: 'int', default: String(8 * 1024 * 1024), min: 1024, doc: 'Unsent response bytes per connection above which the broker stops reading from it.' },
  { name: 'request.max.entries', type: 'int', default: String(DEFAULT_REQUEST_MAX_ENTRIES), min: 1, doc: 'Most topics, partitions or groups one request may name (repeats are merged first); a larger request is refused with INVALID_REQUEST. A request frame is decoded up to 8 times this many values (fields and list items), and refused past that. Keep it at least topic.max.partitions.' },
  { name: 'http.consumer.max.instances', type: 'int', default: '100', min: 0, doc: 'Most HTTP consumer instances (POST /consumers/{group}) this broker holds at once; more are refused with GROUP_LIMIT_REACHED (429). 0 turns HTTP consumers off.' },
  { name: 'http.consumer.instance.timeout.ms', type: 'int', default: '300000', min: 1000, doc: 'An HTTP consumer instance not used (polled, committed, ...) for this long is closed and leaves its group.' },
  { name: 'http.max.body.bytes', type: 'int', default: String(8 * 1024 * 1024), min: 1024, doc: 'Largest HTTP request body.' },
  { name: 'http.max.headers', type: 'int', default: '100', min: 8, max: 10000, doc: 'Most header lines one HTTP request may carry, on the HTTP API port and in the WebSocket upgrade; more are refused with 431.' },
  { name: 'http.max.header.bytes', type: 'int', default: String(16 * 1024), min: 1024, max: 1024 * 1024, doc: 'Largest request head (request line and headers) on the HTTP API port and in the WebSocket upgrade; larger ones are refused with 431.' },
  { name: 'http.cors.allowed.origins', type: 'string', default: '', doc: 'Browser origins (scheme://host[:port], comma separated; * for any) whose pages may call the HTTP API: they get Access-Control-Allow-Origin and answered preflights. The broker\'s own HTTP origin is always allowed, requests without an Origin header (Node, curl, the CLI) are never affected. A POST, PUT, PATCH or DELETE from any other origin is refused with 403 before it does anything.' },
  { name: 'ws.allowed.origins', type: 'string', default: '', doc: 'Browser origins (scheme://host[:port], comma separated; * for any) whose pages may open a WebSocket to the client port. The broker\'s own HTTP origin is always allowed, connections without an Origin header (Node clients, the CLI) are never affected; an upgrade from any other origin is refused with 403.' },
  { name: 'allow.insecure', type: 'boolean', default: 'false', doc: 'Allow listening on a non-loopback address (--host 0.0.0.0, a LAN address, a non-loopback Raft voter address) although no authentication or TLS is configured; every start then logs a warning. Off: such a start fails with INVALID_CONFIG.' },
  // Security (security/; packages/broker/README.md "Security").
  { name: 'authentication.enabled', type: 'boolean', default: 'false', doc: 'Require every client connection to authenticate (SASL SCRAM on the WebSocket port, HTTP Basic on the HTTP API) before any request but the handshake. Off: everyone is User:ANONYMOUS.' },
  { name: 'sasl.enabled.mechanisms', type: 'string', default: 'SCRAM-SHA-256,SCRAM-SHA-512', doc: 'SASL mechanisms clients may authenticate with (comma separated): SCRAM-SHA-256, SCRAM-SHA-512, and PLAIN (the password checked against the user\'s SCRAM credential; offered only on TLS connections, refused on plaintext ones).' },
  { name: 'authorization.enabled', type: 'boolean', default: 'false', doc: 'Check every request against the ACLs (mq acl add): deny wins, nothing is allowed without an allow, super users pass. Off: every request is allowed (as before).' },
  { name: 'http.token.lifetime.ms', type: 'long', default: '3600000', min: 1000, doc: 'How long a bearer token from POST /tokens is valid (on the broker that issued it; tokens are not replicated and do not survive a restart).' },
  { name: 'tls.cert.file', type: 'string', default: '', doc: 'PEM certificate (chain) of the client WebSocket port and the HTTP API; with tls.key.file they speak TLS only (wss://, https://).' },
  { name: 'tls.key.file', type: 'string', default: '', doc: 'PEM private key of tls.cert.file.' },
  { name: 'tls.ca.file', type: 'string', default: '', doc: 'PEM CA(s) that sign client certificates (mutual TLS).' },
  { name: 'tls.client.auth', type: 'enum', default: 'none', values: ['none', 'requested', 'required'], doc: 'Client certificates: none; requested (a verified one makes its subject CN the principal, User:<CN>); required (connections without one signed by tls.ca.file are refused).' },
  { name: 'inter.broker.tls.enabled', type: 'boolean', default: 'false', doc: 'Cluster: TLS with peer verification both ways on the inter-broker listener and the Raft listener, and on every connection this process opens to them (peer fetches, relays, the controller channel, Raft). Each process presents its certificate (inter.broker.tls.cert.file) and accepts only peers whose certificate inter.broker.tls.ca.file signs; a dial also checks that the peer\'s certificate names the host it dialled (its registered host or its controller.quorum.voters host: put those names or IP addresses in every certificate\'s subjectAltName). Certificates are reloaded every tls.reload.interval.ms, as the client listeners\' are. Any certificate that CA signs is a peer: give brokers a CA of their own, or use cluster.secret.file too.' },
  { name: 'inter.broker.tls.cert.file', type: 'string', default: '', doc: 'PEM certificate (chain) this broker presents on the inter-broker and Raft links, as server and as client (inter.broker.tls.enabled). Empty: tls.cert.file.' },
  { name: 'inter.broker.tls.key.file', type: 'string', default: '', doc: 'PEM private key of inter.broker.tls.cert.file. Empty: tls.key.file.' },
  { name: 'inter.broker.tls.ca.file', type: 'string', default: '', doc: 'PEM CA(s) that sign the certificates of the cluster\'s brokers and controllers (inter.broker.tls.enabled). Empty: tls.ca.file.' },
  { name: 'tls.reload.interval.ms', type: 'long', default: '30000', min: 100, doc: 'How often the TLS files are checked for a change; a changed certificate is used for new connections without a restart.' },
  { name: 'super.users', type: 'string', default: '', doc: 'Principals that pass every authorization check, separated by ; or , (e.g. User:admin;User:ops).' },
  { name: 'log.retention.check.interval.ms', type: 'long', default: '300000', min: 100, doc: 'How often retention runs.' },
  { name: 'connections.max.idle.ms', type: 'long', default: '600000', min: 1000, doc: 'Close client connections that sent no request for this long (Kafka\'s default: 10 minutes).' },
  { name: 'connection.setup.timeout.ms', type: 'int', default: '10000', min: 100, doc: 'Destroy a TCP connection that has not completed the WebSocket upgrade within this long (a silent socket, or HTTP headers trickling in); on the HTTP API port, one whose request headers are not complete within this long.' },
  { name: 'connection.frame.timeout.ms', type: 'int', default: '30000', min: 100, doc: 'Close a connection that sent no complete frame for this long: none since it connected, or one begun and not finished (slowloris). A connection idle between complete frames is governed by connections.max.idle.ms. On the HTTP API port: a request (headers and body) not received within this long.' },
  { name: 'shutdown.timeout.ms', type: 'int', default: '10000', min: 0, doc: 'How long close() waits for in-flight requests.' },
  // Consumer groups (the coordinator; see src/group)
  { name: 'offsets.topic.num.partitions', type: 'int', default: '50', min: 1, doc: 'Partitions of the internal __consumer_offsets topic (fixed once it exists).' },
  { name: 'group.min.session.timeout.ms', type: 'int', default: '6000', min: 1, doc: 'Smallest session timeout a group member may ask for.' },
  { name: 'group.max.session.timeout.ms', type: 'int', default: '1800000', min: 1, doc: 'Largest session timeout a group member may ask for.' },
  { name: 'group.initial.rebalance.delay.ms', type: 'int', default: '3000', min: 0, doc: 'How long the first rebalance of an empty group waits for more members.' },
  { name: 'group.max.size', type: 'int', default: '10000', min: 1, doc: 'Most members one consumer group may have.' },
  { name: 'offsets.retention.minutes', type: 'long', default: '10080', min: 1, doc: 'Committed offsets of a group empty this long expire.' },
  { name: 'offsets.retention.check.interval.ms', type: 'long', default: '600000', min: 1, doc: 'How often expired offsets are removed.' },
  { name: 'group.max.groups', type: 'int', default: String(DEFAULT_MAX_GROUPS), min: 1, doc: 'Most groups one coordinator holds (groups loaded from __consumer_offsets are never refused; new ones stop at group.create.limit).' },
  { name: 'group.create.limit', type: 'int', default: '0', min: 0, doc: 'New groups are refused (GROUP_LIMIT_REACHED, retriable) once the coordinator holds this many; the rest up to group.max.groups is a reserve for existing groups. 0: 90% of group.max.groups.' },
  { name: 'group.empty.retention.ms', type: 'int', default: String(DEFAULT_GROUP_EMPTY_RETENTION_MS), min: 1, doc: 'An empty group with no members and no committed offsets is removed after this long (checked as often); groups with offsets keep them for offsets.retention.minutes.' },
  { name: 'group.create.rate.per.connection', type: 'int', default: String(DEFAULT_GROUP_CREATE_RATE_PER_CONNECTION), min: 1, doc: 'New groups one connection may create per second; past it GROUP_CREATE_THROTTLED (retriable).' },
  { name: 'group.create.burst.per.connection', type: 'int', default: String(DEFAULT_GROUP_CREATE_BURST_PER_CONNECTION), min: 1, doc: 'New groups one idle connection may create at once.' },
  { name: 'offset.metadata.max.bytes', type: 'int', default: '4096', min: 0, doc: 'Largest metadata string an offset commit may carry.' },
  { name: 'offsets.topic.segment.bytes', type: 'int', default: String(100 * 1024 * 1024), min: 1024, doc: 'segment.bytes of __consumer_offsets when it is created (closed segments get compacted).' },
  { name: 'offsets.compaction.interval.ms', type: 'long', default: '60000', min: 10, doc: 'Unused since a single broker is a one-node cluster (accepted so old configurations still start): __consumer_offsets is compacted by the log cleaner, every log.cleaner.interval.ms.' },
  { name: 'offsets.topic.replication.factor', type: 'int', default: '3', min: 1, doc: 'Replicas of __consumer_offsets when it is created (capped at the live brokers then: 1 on a single broker).' },
  { name: 'offsets.commit.timeout.ms', type: 'int', default: '5000', min: 1, doc: 'How long an offset commit or group write waits for the in-sync replicas of its __consumer_offsets partition.' },
  // Transactions (src/txn): the coordinator of a transactional id leads its __transaction_state partition.
  { name: 'transaction.state.log.num.partitions', type: 'int', default: '50', min: 1, max: 1000, doc: 'Partitions of __transaction_state when it is created (by the first FindCoordinator for a transactional id); fixed afterwards.' },
  { name: 'transaction.state.log.replication.factor', type: 'int', default: '3', min: 1, doc: 'Replicas of __transaction_state when it is created (capped at the live brokers then: 1 on a single broker).' },
  { name: 'transaction.state.log.segment.bytes', type: 'int', default: String(100 * 1024 * 1024), min: 1024, doc: 'segment.bytes of __transaction_state when it is created (closed segments get compacted).' },
  { name: 'transaction.max.timeout.ms', type: 'int', default: '900000', min: 1, doc: 'The largest transaction timeout a producer may ask for (InitProducerId); a larger one is refused with INVALID_TRANSACTION_TIMEOUT.' },
  { name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms', type: 'int', default: '10000', min: 10, doc: 'How often the coordinator looks for transactions open longer than their timeout and aborts them (fencing the producer: its epoch is bumped).' },
  { name: 'transactional.id.expiration.ms', type: 'int', default: String(DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS), min: 1, doc: 'A transactional id with no transaction open and no request for this long is forgotten by its coordinator (a tombstone in __transaction_state); its next InitProducerId gets a new producer id.' },
  { name: 'transaction.marker.timeout.ms', type: 'int', default: '5000', min: 1, doc: 'How long a transaction marker write waits for the in-sync replicas of its partition (the coordinator retries until every marker is written).' },
  // Cluster (see src/controller and src/cluster); empty controller.quorum.voters and bootstrap servers = a one-node cluster.
  { name: 'controller.quorum.voters', type: 'string', default: '', doc: 'Raft voters of the metadata log, id@host:port of each one\'s Raft listener, comma separated (every broker of a small cluster is a voter). Empty (and no bootstrap servers): a one-node cluster, this broker its only voter, with no Raft listener.' },
  { name: 'process.roles', type: 'string', default: '', doc: 'What this process is: broker,controller (a Raft voter that also hosts partitions; the default when broker.id is in controller.quorum.voters), controller (a dedicated voter: metadata log and active-controller duties, no partitions) or broker (hosts partitions and follows the metadata log from the active controller without voting; the default when broker.id is not a voter and controller.quorum.bootstrap.servers is set).' },
  { name: 'controller.quorum.bootstrap.servers', type: 'string', default: '', doc: 'host:port (inter-broker port, inter.broker.port) of one or more controller voters, comma separated: where a broker-only process (process.roles=broker) fetches the metadata log and sends its commands. Needed for the first contact only: controllers added later register their address in the metadata, and the broker reaches them there too.' },
  { name: 'broker.rack', type: 'string', default: '', doc: 'Rack (or zone) of this broker; replicas of a partition are spread over racks.' },
  { name: 'inter.broker.port', type: 'int', default: '0', min: 0, max: 65535, doc: 'Cluster: the port of the inter-broker listener (on the listen host; 0: any free port, registered with the controller). Other brokers and controllers send replica fetches, ControllerForward and relayed requests here; the client port refuses them. Keep it on a network only brokers reach (until brokers authenticate each other). controller.quorum.bootstrap.servers names these ports of the controllers, so set it on controllers.' },
  { name: 'cluster.secret.file', type: 'string', default: '', doc: 'Cluster: a file (mode 0600 or stricter, at least 16 bytes; a trailing newline is not part of it) holding the secret every broker and controller of the cluster shares, e.g. made with `openssl rand -base64 32`. With it, every connection to the inter-broker listener and the Raft listener must prove the secret first (a mutual HMAC-SHA-256 challenge-response: the secret never crosses the wire and a captured exchange cannot be replayed), and this process proves it on every connection it opens to them; an unauthenticated peer is closed with a reason and one log line before anything it sent is applied. Empty: peers are recognised by the port they reach (keep the inter-broker and Raft ports on a network only cluster members reach; a start beyond loopback warns).' },
  { name: 'cluster.peer.addresses', type: 'string', default: '', doc: 'id@host:port overrides of other brokers\' addresses for inter-broker connections (e.g. through a proxy); default: their registered address.' },
  { name: 'controller.raft.address', type: 'string', default: '', doc: 'host:port of this controller\'s Raft listener when its id is not in controller.quorum.voters: a controller that joins a running quorum. It starts with an empty metadata log and no vote, and waits until `mq controller add-voter --id <id> --address <host:port>` adds it (as a learner that catches up, then as a voter). A founding voter leaves it empty (its address is its place in controller.quorum.voters).' },
  { name: 'controller.quorum.verify.peer.address', type: 'boolean', default: 'true', doc: 'Refuse a Raft connection that claims to be a voter unless it comes from that voter\'s address in controller.quorum.voters (until voters authenticate each other, this stops another process from posing as a voter). Turn off only where a voter\'s outgoing address differs from the one it is dialled at (NAT, several interfaces).' },
  { name: 'controller.tick.ms', type: 'int', default: '40', min: 1, doc: 'Raft tick of the metadata log (election timeout is 10 ticks, randomised up to 2x).' },
  { name: 'controller.fsync', type: 'boolean', default: 'true', doc: 'fsync the metadata log (turn off only for tests).' },
  { name: 'broker.session.timeout.ms', type: 'int', default: '600', min: 100, doc: 'A broker the active controller has not heard from for this long is fenced; its partitions get new leaders from their ISR. A voter whose Raft port refuses connections (its process is gone) is fenced at once. At least 15 controller ticks.' },
  { name: 'unclean.recovery.wait.ms', type: 'long', default: '5000', min: 0, doc: 'When a partition has no trusted live ISR member (its candidates restarted after an unclean shutdown), how long the controller waits for every last-ISR member to report its log end before electing the longest log it has heard of (KIP-966 in spirit).' },
  { name: 'replica.lag.time.max.ms', type: 'long', default: '10000', min: 1, doc: 'A follower not caught up for this long leaves the ISR.' },
  { name: 'replica.fetch.max.wait.ms', type: 'int', default: '500', min: 0, doc: 'Long-poll time of follower fetches.' },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: 'false', doc: 'Default of the topic key: elect a replica outside the ISR when no ISR member is alive (may lose acknowledged records).' },
  { name: 'auto.leader.rebalance.enable', type: 'boolean', default: 'true', doc: 'Move leadership back to each partition\'s preferred replica when it is in sync again.' },
  { name: 'partition.autobalancing.mode', type: 'enum', default: DEFAULT_AUTO_BALANCE.mode, values: [...AUTO_BALANCE_MODES], doc: "The active controller's own partition balancer (as Redpanda's): off = only mq cluster rebalance and decommission move replicas; node_add = when a broker joins, even out replicas per broker onto it; continuous = that, whenever replicas per broker are uneven, and move the replicas of a broker unavailable for longer than partition.autobalancing.node.availability.timeout.ms. Counts replicas (mq cluster rebalance is the disk-aware one)." },
  { name: 'partition.autobalancing.max.concurrent.moves', type: 'int', default: String(DEFAULT_AUTO_BALANCE.maxConcurrentMoves), min: 1, doc: 'The most partitions moving at once while the controller balances (moves started by anyone count).' },
  { name: 'partition.autobalancing.node.availability.timeout.ms', type: 'long', default: String(DEFAULT_AUTO_BALANCE.nodeAvailabilityTimeoutMs), min: 1000, doc: 'continuous balancing: a broker fenced for longer than this has its replicas moved to the live brokers (while they can hold the replication factor).' },
  { name: 'partition.autobalancing.tick.interval.ms', type: 'long', default: String(DEFAULT_AUTO_BALANCE.checkIntervalMs), min: 100, doc: 'How often the active controller checks whether partitions need balancing.' },
  { name: 'leader.imbalance.check.interval.ms', type: 'long', default: '30000', min: 100, doc: 'How often the active controller checks for leaders away from their preferred replica.' },
  // ---- quotas (src/quota; packages/broker/README.md "Quotas"): the quotas themselves are in the metadata log (mq quota set).
  { name: 'quota.window.num', type: 'int', default: String(DEFAULT_QUOTA_WINDOW_NUM), min: 2, max: 1000, doc: 'Samples a client quota\'s rate is measured over (Kafka\'s name and default).' },
  { name: 'quota.window.size.seconds', type: 'int', default: String(DEFAULT_QUOTA_WINDOW_SIZE_SECONDS), min: 1, max: 3600, doc: 'Length of one sample of a client quota\'s rate; a client over its quota waits at most quota.window.num times this long per answer.' },
  { name: 'max.connections.per.ip', type: 'int', default: String(DEFAULT_MAX_CONNECTIONS), min: 0, doc: 'Client connections one IP address may hold on this broker (client WebSocket port); a connection beyond it is closed at once with the reason (1008) and one log line.' },
  { name: 'max.connections.per.principal', type: 'int', default: String(DEFAULT_MAX_CONNECTIONS), min: 0, doc: 'Client connections one authenticated principal may hold on this broker; a connection beyond it is closed once it authenticates (mutual TLS: when it connects), with the reason (1008) and one log line.' },
];

export const BROKER_CONFIG = defsByName(BROKER_CONFIG_DEFS);

/** The effective broker configuration: defaults overlaid with explicit values. */
export class BrokerConfig {
  /** Only the keys set explicitly (persisted with the data). */
  readonly explicit: ConfigMap;
  private readonly values: ConfigMap;

  constructor(explicit: Readonly<Record<string, unknown>>) {
    this.explicit = Object.freeze(validateConfigs(BROKER_CONFIG, explicit, 'broker'));
    const values: Record<string, string> = {};
    for (const def of BROKER_CONFIG_DEFS) values[def.name] = this.explicit[def.name] ?? def.default;
    this.values = Object.freeze(values);
  }

  get(name: string): string {
    const v = this.values[name];
    if (v === undefined) throw new Error(`no broker config ${name}`);
    return v;
  }

  int(name: string): number {
    return Number(this.get(name));
  }

  bool(name: string): boolean {
    return this.get(name) === 'true';
  }

  /** Where a value comes from: "broker" when set explicitly, else "default". */
  source(name: string): 'broker' | 'default' {
    return this.explicit[name] !== undefined ? 'broker' : 'default';
  }

  entries(): Array<{ name: string; value: string; source: 'broker' | 'default' }> {
    return BROKER_CONFIG_DEFS.map((d) => ({ name: d.name, value: this.get(d.name), source: this.source(d.name) }));
  }
}
