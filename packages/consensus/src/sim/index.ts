export { Simulator, runSimulation, InvariantViolation } from './simulator.js';
export { checkKvHistory } from './linearizability.js';
export { Rng } from './rng.js';
export { EventQueue } from './event-queue.js';
export type { SimEvent } from './event-queue.js';
export type { SimOptions, SimResult } from './simulator.js';
export type { KvOp, LinearizabilityResult } from './linearizability.js';
