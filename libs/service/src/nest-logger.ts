/**
 * Nest's logger is process-wide (each application created overrides it), so
 * in a process of several modules (run.ts) the last one's would log every
 * module's Nest messages under its name. Each module boots inside
 * `withNestLogger`, and what its boot starts (HTTP servers, NATS
 * connections, timers) keeps that scope.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';

const nestLoggers = new AsyncLocalStorage<LoggerService>();

/**
 * Nest's logger is process-wide (the last application created overrides
 * it): this one writes through the logger of the module whose work is
 * running, and through its own module's when none is.
 */
export class NestModuleLogger implements LoggerService {
  constructor(private readonly own: LoggerService) {}
  private get target(): LoggerService {
    return nestLoggers.getStore() ?? this.own;
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.target.log(message, ...rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.target.error(message, ...rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.target.warn(message, ...rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.target.debug?.(message, ...rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.target.verbose?.(message, ...rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.target.fatal?.(message, ...rest);
  }
}

/** Runs `fn` (a module's boot) with `nest` as the Nest logger of everything it starts. */
export function withNestLogger<T>(nest: LoggerService, fn: () => T): T {
  return nestLoggers.run(nest, fn);
}

