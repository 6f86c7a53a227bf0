export { runClusterSimulation, TOPIC, TXN_TOPIC } from './cluster-sim.js';
export { ClusterChecker, SimViolation } from './checker.js';
export { TxnChecker, txnValue } from './txn-checker.js';
export { MemoryFileSystem } from './memory-fs.js';
export { RaftDisk } from './raft-disk.js';
export { SimBroker, simBrokerConfig } from './sim-broker.js';
export { SimNetwork, ServerSocket, NO_NETWORK_FAULTS } from './sim-network.js';
export { SimTime, SIM_EPOCH_MS } from './sim-time.js';

export type { ClusterSimOptions, ClusterSimResult, ClusterSimScript } from './cluster-sim.js';
export type { Acked, CheckerOptions } from './checker.js';
export type { TxnCheckerOptions } from './txn-checker.js';
export type { DiskTiming } from './memory-fs.js';
export type { SimBrokerDeps } from './sim-broker.js';
export type { Accept, NetworkFaults } from './sim-network.js';
export type { SimProcess } from './sim-time.js';
