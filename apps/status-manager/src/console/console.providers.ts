/** The web console's providers, spread into the module (console.controller.ts serves it). */
import type { Provider } from '@nestjs/common';
import { Clock } from '@app/clock';
import { SERVICE_CONFIG, SERVICE_CONTEXT, type ServiceContext } from '@app/service';
import { HttpNatsMonitoring } from '../adapters/http-nats-monitoring.js';
import { NatsPodTraces } from '../adapters/nats-pod-traces.js';
import type { StatusManagerConfig } from '../status-manager.config.js';
import { StatusManager } from '../status-manager.js';
import { LeaderGate } from '../takeover-replay.js';
import { ConsoleFeed, ConsolePods } from './console-feed.js';
import { ConsoleTimelines, ConsoleTopology, NatsMonitoring, PodTraces } from './console-views.js';

export const consoleProviders: Provider[] = [
  {
    provide: ConsolePods,
    inject: [StatusManager, LeaderGate],
    // The pods as `/pods` serves them: a standby reads `pod-status` afresh.
    useFactory: (manager: StatusManager, gate: LeaderGate): ConsolePods => ({
      listPods: async () => {
        if (!gate.isActing) await manager.restore({ readOnly: true });
        return manager.listPods();
      },
      onStatusChanged: (listener) => manager.onStatusChanged(listener),
      onEvent: (listener) => manager.onEvent(listener),
    }),
  },
  { provide: ConsoleFeed, inject: [ConsolePods, Clock], useFactory: (pods: ConsolePods, clock: Clock) => new ConsoleFeed(pods, clock) },
  { provide: PodTraces, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new NatsPodTraces(ctx.connection) },
  { provide: NatsMonitoring, inject: [SERVICE_CONFIG], useFactory: (cfg: StatusManagerConfig) => new HttpNatsMonitoring(cfg.NATS_MONITOR_URL) },
  { provide: ConsoleTimelines, inject: [ConsolePods, PodTraces], useFactory: (pods: ConsolePods, traces: PodTraces) => new ConsoleTimelines(pods, traces) },
  {
    provide: ConsoleTopology,
    inject: [NatsMonitoring, Clock, SERVICE_CONFIG],
    useFactory: (monitoring: NatsMonitoring, clock: Clock, cfg: StatusManagerConfig) => new ConsoleTopology(monitoring, clock, cfg.NODE_NAME),
  },
];
