import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** pleg's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const plegConfigSchema = {
  PLEG_MODE: env.oneOf(['generic', 'evented'] as const, { default: 'evented', describe: 'evented, the runtime\'s container events with a relist as a safety net, falling back to the relist where the runtime streams none (containerd 1.6) or the stream breaks, and returning; or generic, the relist alone (docs/adr/0040)' }),
  RELIST_PERIOD: env.duration({ default: 1000, describe: 'the generic PLEG\'s relist period' }),
  EVENTED_RELIST_PERIOD: env.duration({ default: 300_000, describe: 'the evented PLEG\'s safety-net relist period' }),
  RELIST_THRESHOLD: env.duration({ default: 180_000, describe: 'the PLEG is unhealthy when its last successful relist (evented: its last heartbeat) is older than this' }),
  INSPECT_TIMEOUT: env.duration({ default: 5000, describe: 'how long inspecting one pod may take before it is left for the next relist' }),
  INSPECT_CONCURRENCY: env.int({ default: 4, min: 1, max: 64, describe: 'pods inspected at once during a relist' }),
};

export type PlegConfig = FullConfig<typeof plegConfigSchema>;
