/**
 * The connections a cluster node opens: the controller channel (a process
 * with `controller.quorum.bootstrap.servers` reaches the active controller
 * through it) and the pooled connections to the other brokers. Both prove
 * the cluster secret and dial with TLS when configured; a peer's address
 * comes from the metadata when the connection is opened.
 */
import type { ConnectFn } from '@mq/client/internal';
import type { BrokerConfig } from '../../config/broker-config.js';
import { ControllerChannel } from '../../controller/controller-channel.js';
import type { MetadataState } from '../../controller/metadata-state.js';
import { parseBootstrapServers } from '../../controller/roles.js';
import { readMaterial, type TlsSettings } from '../../server/tls.js';
import { parsePeerAddresses, PeerConnections } from '../peer-connections.js';

export interface LinkOptions {
  brokerId: number;
  config: BrokerConfig;
  clusterSecret?: Uint8Array;
  interBrokerTls?: TlsSettings;
  /** Opens connections to the other brokers (default: a WebSocket to each one's inter-broker listener). */
  connect?: ConnectFn;
}

export interface ClusterLinks {
  /** Present when `controller.quorum.bootstrap.servers` names controllers. */
  channel: ControllerChannel | undefined;
  peers: PeerConnections;
}

/**
 * Where broker `id` is reached: its inter-broker listener (the client port
 * refuses replica fetches and ControllerForward), or a dedicated
 * controller's registered endpoint (a forwarded command).
 */
export function peerAddress(md: Pick<MetadataState, 'broker' | 'controllerEndpoint'>, id: number): string | undefined {
  const b = md.broker(id);
  if (b) return `${b.host}:${b.interBrokerPort ?? b.port}`;
  const c = md.controllerEndpoint(id);
  return c ? `${c.host}:${c.port}` : undefined;
}

/** Opens nothing yet: connections are made on first use, with addresses from `metadata()` (the controller's, once it exists). */
export function clusterLinks(o: LinkOptions, metadata: () => MetadataState): ClusterLinks {
  const cfg = o.config;
  const bootstrap = parseBootstrapServers(cfg.get('controller.quorum.bootstrap.servers'));
  const clusterAuth = o.clusterSecret ? { secret: o.clusterSecret, brokerId: o.brokerId } : undefined;
  // Read at each dial: a renewed certificate is used by the next connection.
  const tlsSettings = o.interBrokerTls;
  const dialTls = tlsSettings ? () => ({ ...readMaterial(tlsSettings), rejectUnauthorized: true }) : undefined;
  const channel =
    bootstrap.length > 0
      ? new ControllerChannel({
          brokerId: o.brokerId,
          servers: bootstrap,
          connectTimeoutMs: 3000,
          maxResponseBytes: cfg.int('max.frame.bytes') * 2,
          clusterAuth,
          dialTls,
          // Controllers added after this process was configured: their addresses are in the metadata.
          registered: () => metadata().controllerEndpoints(),
        })
      : undefined;
  // Inter-broker connections; a peer's address comes from its registration (looked up when connecting).
  const peers = new PeerConnections(
    {
      brokerId: o.brokerId,
      overrides: parsePeerAddresses(cfg.get('cluster.peer.addresses')),
      connectTimeoutMs: 3000,
      requestTimeoutMs: cfg.int('replica.fetch.max.wait.ms') + 10_000,
      maxResponseBytes: cfg.int('max.frame.bytes') * 2,
      ...(o.connect ? { connect: o.connect } : {}),
      clusterAuth,
      dialTls,
    },
    (id) => peerAddress(metadata(), id),
  );
  return { channel, peers };
}
