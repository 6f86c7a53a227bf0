// Compliance suites for implementations of the package's interfaces (jest).
export { raftStorageCompliance } from './storage/compliance.js';
export { raftTransportCompliance } from './transport/compliance.js';
export type { StorageFactory } from './storage/compliance.js';
export type { TransportFactory } from './transport/compliance.js';
