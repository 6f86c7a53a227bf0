export { MemoryLog } from './memory-log.js';
export { ManualTimers, settle } from './manual-timers.js';
export { MemoryCheckpoint } from './memory-checkpoint.js';

export type { MemoryLogOptions } from './memory-log.js';
