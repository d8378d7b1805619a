export { NestPinoLogger, createLogger, silentLogger } from './logger.js';
export type { Logger, LoggerIdentity } from './logger.js';
export { Counter, Gauge, Histogram, Registry, Summary, createMetricsRegistry } from './metrics.js';
