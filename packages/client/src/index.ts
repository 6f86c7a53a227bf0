export { Producer } from './producer/index.js';
