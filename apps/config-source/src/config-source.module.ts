import { Controller, Get, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Clock, SystemClock } from '@app/clock';
import { Subjects, type SourcesSnapshotMessage } from '@app/contracts';
import { parseColonSeparatedMapStringString } from '@app/kube';
import { NatsBus } from '@app/nats';
import { Counter, Gauge, type Logger, type Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONFIG, SERVICE_LOGGER } from '@app/service';
import { ConfigSourceService, type ConfigMetrics } from './config-source.service.js';
import { FsManifestDirectory, HttpManifestFetcher } from './manifest-reader.js';
import type { ConfigSourceConfig } from './config-source.config.js';
import { FileSource, HttpSource, type PodSource } from './sources.js';

/** Each source's current listing: over NATS for the sync loop, over HTTP for people. */
@Controller()
export class SourcesController {
  constructor(private readonly service: ConfigSourceService) {}

  @MessagePattern(Subjects.sourcesSnapshot.pattern)
  onSnapshot(): SourcesSnapshotMessage {
    return this.service.snapshot();
  }

  @Get('sources')
  sources(): SourcesSnapshotMessage {
    return this.service.snapshot();
  }
}

function sourceNames(cfg: ConfigSourceConfig): string[] {
  return [...(cfg.POD_MANIFEST_PATH ? ['file'] : []), ...(cfg.MANIFEST_URL ? ['http'] : [])];
}

/** config.PodConfig: file and http sources turned into PodUpdate operations. */
@Module({
  controllers: [SourcesController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: ConfigSourceService,
      inject: [SERVICE_CONFIG, NatsBus, Clock, SERVICE_LOGGER, METRICS_REGISTRY],
      useFactory: (cfg: ConfigSourceConfig, bus: NatsBus, clock: Clock, logger: Logger, registry: Registry) => {
        const problems = new Gauge({ name: 'kubelet_split_config_manifest_problems', help: 'Manifests or pods refused in the last listing, by source.', labelNames: ['source'], registers: [registry] });
        const operations = new Counter({ name: 'kubelet_split_config_pod_updates_total', help: 'Pods in PodUpdate operations published, by operation.', labelNames: ['op'], registers: [registry] });
        const metrics: ConfigMetrics = {
          problems: (source, count) => problems.set({ source }, count),
          operations: (op, count) => operations.inc({ op }, count),
        };
        return new ConfigSourceService(cfg.NODE_NAME, bus, clock, logger.child({ component: 'pod-config' }), sourceNames(cfg), metrics);
      },
    },
  ],
})
export class ConfigSourceModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly service: ConfigSourceService,
    private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly cfg: ConfigSourceConfig,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(HealthChecks) private readonly health: HealthChecks,
  ) {}

  onModuleInit(): void {
    const sources: PodSource[] = [];
    const { cfg, clock, service } = this;
    if (cfg.POD_MANIFEST_PATH) {
      sources.push(new FileSource(cfg.POD_MANIFEST_PATH, cfg.NODE_NAME, new FsManifestDirectory(), clock, this.logger.child({ component: 'file-source' }), cfg.FILE_CHECK_FREQUENCY, service.onListing));
    }
    if (cfg.MANIFEST_URL) {
      const headers = parseColonSeparatedMapStringString(cfg.MANIFEST_URL_HEADER, 'MANIFEST_URL_HEADER');
      sources.push(new HttpSource(cfg.MANIFEST_URL, headers, cfg.NODE_NAME, new HttpManifestFetcher(), clock, this.logger.child({ component: 'http-source' }), cfg.HTTP_CHECK_FREQUENCY, service.onListing, service.onProblems));
    }
    this.health.addReadiness('sources', () => {
      const snap = service.snapshot().sources;
      const waiting = snap.filter((s) => !s.ready).map((s) => s.source);
      return { ok: true, detail: snap.length === 0 ? 'no source configured' : waiting.length > 0 ? `waiting for ${waiting.join(', ')}` : `ready: ${snap.map((s) => `${s.source} (${s.pods.length} pods)`).join(', ')}` };
    });
    service.start(sources);
  }

  onApplicationShutdown(): void {
    this.service.stop();
  }
}
