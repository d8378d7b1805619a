/**
 * The Nest providers of `/stats/summary` and `/metrics/resource`, spread
 * into StatusManagerModule's (one provider per port).
 */
import type { Provider } from '@nestjs/common';
import { Clock } from '@app/clock';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient, type CriRuntime } from '@app/cri/client';
import { SERVICE_CONFIG, SERVICE_CONTEXT, type ServiceContext } from '@app/service';
import { DesiredPods } from '../ports.js';
import type { StatusManagerConfig } from '../status-manager.config.js';
import { CriStatsProvider, HostStats, HostStatsReader, SummaryProvider, VolumeStatsCache } from '@app/stats';

/** The CRI client of the stats reads (ListContainerStats, ListPodSandboxStats, ImageFsInfo...). */
export const STATS_CRI = Symbol('STATS_CRI');

export const statsProviders: Provider[] = [
  { provide: STATS_CRI, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'status-manager', DEFAULT_CRI_TIMEOUTS) },
  { provide: HostStats, inject: [Clock], useFactory: (clock: Clock) => new HostStatsReader(clock) },
  {
    provide: SummaryProvider,
    inject: [STATS_CRI, DesiredPods, HostStats, Clock, SERVICE_CONFIG],
    useFactory: (cri: CriRuntime, desired: DesiredPods, host: HostStats, clock: Clock, cfg: StatusManagerConfig) =>
      new CriStatsProvider(cri, desired, host, clock, {
        nodeName: cfg.NODE_NAME,
        podRootDir: cfg.POD_ROOT_DIR,
        podLogsDir: cfg.POD_LOGS_DIR,
        volumes: new VolumeStatsCache(host, clock, { podRootDir: cfg.POD_ROOT_DIR, periodMs: cfg.VOLUME_STATS_AGG_PERIOD }),
      }),
  },
];
