export { Clock, SystemClock } from './clock.js';
export type { Timer } from './clock.js';
export { untilAborted } from './abort.js';
