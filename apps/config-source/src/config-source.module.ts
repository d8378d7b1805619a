import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ApiServer } from '@app/apiserver';
import { Clock, SystemClock } from '@app/clock';
import { ConfigError } from '@app/config';
import { EventRecorder } from '@app/contracts';
import { parseColonSeparatedMapStringString } from '@app/kube';
import { NatsBus, NatsEventRecorder } from '@app/nats';
import { KvPodManager } from '@app/pod-manager';
import type { Logger, Registry } from '@app/observability';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, bucketOf, type ServiceContext } from '@app/service';
import { FsManifestDirectory } from './adapters/fs-manifest-directory.js';
import { HttpManifestFetcher } from './adapters/http-manifest-fetcher.js';
import { ReflectorApiserverPods } from './adapters/reflector-apiserver-pods.js';
import { ApiserverSource } from './apiserver-source.js';
import { NatsPodUpdateOutbox } from './adapters/nats-pod-update-outbox.js';
import { PromConfigMetrics } from './adapters/prom-config-metrics.js';
import type { ConfigSourceConfig } from './config-source.config.js';
import { ApiObjectsController, SourcesController } from './config-source.controller.js';
import { ReflectorObjectWatch } from './adapters/reflector-object-watch.js';
import { WatchBasedObjectManager } from './object-manager.js';
import { ReflectorServiceWatch } from './adapters/reflector-service-watch.js';
import { ServiceLister } from './service-lister.js';
import { ApiTokenRequester } from './adapters/api-token-requester.js';
import { ServiceAccountTokenManager } from './token-manager.js';
import { PodConfigPublisher } from './pod-config-publisher.js';
import { KvKnownPods } from './adapters/kv-known-pods.js';
import { ApiObjectWatch, ApiServiceWatch, ApiserverPods, ConfigMetrics, KnownPods, ManifestDirectory, ManifestFetcher, PodUpdateOutbox } from './ports.js';
import { FileSource, HttpSource, type PodSource } from './sources.js';

/** The sources the configuration names: file (POD_MANIFEST_PATH), http (MANIFEST_URL) and api (KUBECONFIG). */
export const POD_SOURCES = Symbol('POD_SOURCES');
/** The apiserver of KUBECONFIG, or null for a node that has not joined a cluster. */
const API_SERVER = Symbol('API_SERVER');

function sourceNames(cfg: ConfigSourceConfig): string[] {
  return [...(cfg.POD_MANIFEST_PATH ? ['file'] : []), ...(cfg.MANIFEST_URL ? ['http'] : []), ...(cfg.KUBECONFIG ? ['api'] : [])];
}

/** The apiserver of KUBECONFIG; a kubeconfig that cannot be used is a configuration error (exit 1). */
async function connectApiserver(path: string): Promise<ApiServer> {
  try {
    return await ApiServer.fromKubeconfig(path, 'kubelet-split/config-source');
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
}

/** config.PodConfig: file, http and apiserver sources turned into PodUpdate operations. One provider per port; the adapters are in adapters/. */
@Module({
  controllers: [SourcesController, ApiObjectsController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: ManifestDirectory, useClass: FsManifestDirectory },
    { provide: ManifestFetcher, useClass: HttpManifestFetcher },
    { provide: PodUpdateOutbox, inject: [NatsBus, SERVICE_CONFIG], useFactory: (bus: NatsBus, cfg: ConfigSourceConfig) => new NatsPodUpdateOutbox(bus, cfg.NODE_NAME) },
    { provide: EventRecorder, inject: [NatsBus, SERVICE_CONFIG, Clock], useFactory: (bus: NatsBus, cfg: ConfigSourceConfig, clock: Clock) => new NatsEventRecorder(bus, cfg.NODE_NAME, clock) },
    { provide: KnownPods, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new KvKnownPods(new KvPodManager(bucketOf(ctx, 'pods'), ctx.config.NODE_NAME)) },
    { provide: ConfigMetrics, inject: [METRICS_REGISTRY], useFactory: (r: Registry) => new PromConfigMetrics(r) },
    { provide: API_SERVER, inject: [SERVICE_CONFIG], useFactory: async (cfg: ConfigSourceConfig): Promise<ApiServer | null> => (cfg.KUBECONFIG ? await connectApiserver(cfg.KUBECONFIG) : null) },
    {
      // Only when the node joins a cluster (KUBECONFIG); null for a standalone node.
      provide: ApiserverPods,
      inject: [API_SERVER, Clock, SERVICE_LOGGER],
      useFactory: (api: ApiServer | null, clock: Clock, logger: Logger): ApiserverPods | null => (api ? new ReflectorApiserverPods(api, clock, logger.child({ component: 'apiserver-reflector' })) : null),
    },
    {
      // The objects the node's pods reference, one watch each; null for a standalone node (requests are answered NotJoined).
      provide: ApiObjectWatch,
      inject: [API_SERVER, Clock, SERVICE_LOGGER],
      useFactory: (api: ApiServer | null, clock: Clock, logger: Logger): ApiObjectWatch | null => (api ? new ReflectorObjectWatch(api, clock, logger.child({ component: 'object-reflector' })) : null),
    },
    {
      // Every Service (the service environment variables); null for a standalone node (requests are answered NotJoined).
      provide: ApiServiceWatch,
      inject: [API_SERVER, Clock, SERVICE_LOGGER],
      useFactory: (api: ApiServer | null, clock: Clock, logger: Logger): ApiServiceWatch | null => (api ? new ReflectorServiceWatch(api, clock, logger.child({ component: 'service-reflector' })) : null),
    },
    {
      provide: ServiceLister,
      inject: [ApiServiceWatch, Clock, SERVICE_LOGGER],
      useFactory: (watch: ApiServiceWatch | null, clock: Clock, logger: Logger) => new ServiceLister(watch, clock, logger.child({ component: 'service-lister' })),
    },
    {
      provide: ServiceAccountTokenManager,
      inject: [API_SERVER, Clock, SERVICE_LOGGER],
      useFactory: (api: ApiServer | null, clock: Clock, logger: Logger) => new ServiceAccountTokenManager(api ? new ApiTokenRequester(api) : null, clock, logger.child({ component: 'token-manager' })),
    },
    {
      provide: WatchBasedObjectManager,
      inject: [ApiObjectWatch, Clock, SERVICE_LOGGER],
      useFactory: (watch: ApiObjectWatch | null, clock: Clock, logger: Logger) => new WatchBasedObjectManager(watch, clock, logger.child({ component: 'object-manager' })),
    },
    {
      provide: PodConfigPublisher,
      inject: [PodUpdateOutbox, EventRecorder, Clock, SERVICE_LOGGER, SERVICE_CONFIG, ConfigMetrics],
      useFactory: (outbox: PodUpdateOutbox, events: EventRecorder, clock: Clock, logger: Logger, cfg: ConfigSourceConfig, metrics: ConfigMetrics) =>
        new PodConfigPublisher(outbox, events, clock, logger.child({ component: 'pod-config' }), sourceNames(cfg), metrics),
    },
    {
      provide: POD_SOURCES,
      inject: [SERVICE_CONFIG, ManifestDirectory, ManifestFetcher, ApiserverPods, Clock, SERVICE_LOGGER, PodConfigPublisher],
      useFactory: (cfg: ConfigSourceConfig, dir: ManifestDirectory, fetcher: ManifestFetcher, apiserver: ApiserverPods | null, clock: Clock, logger: Logger, publisher: PodConfigPublisher): PodSource[] => [
        ...(cfg.POD_MANIFEST_PATH ? [new FileSource(cfg.POD_MANIFEST_PATH, cfg.NODE_NAME, dir, clock, logger.child({ component: 'file-source' }), cfg.FILE_CHECK_FREQUENCY, publisher.onListing)] : []),
        ...(cfg.MANIFEST_URL
          ? [new HttpSource(cfg.MANIFEST_URL, parseColonSeparatedMapStringString(cfg.MANIFEST_URL_HEADER, 'MANIFEST_URL_HEADER'), cfg.NODE_NAME, fetcher, clock, logger.child({ component: 'http-source' }), cfg.HTTP_CHECK_FREQUENCY, publisher.onListing, publisher.onProblems)]
          : []),
        ...(apiserver ? [new ApiserverSource(cfg.NODE_NAME, apiserver, logger.child({ component: 'apiserver-source' }), publisher.onListing)] : []),
      ],
    },
  ],
})
export class ConfigSourceModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly publisher: PodConfigPublisher,
    @Inject(POD_SOURCES) private readonly sources: PodSource[],
    @Inject(HealthChecks) private readonly health: HealthChecks,
    private readonly objects: WatchBasedObjectManager,
    private readonly services: ServiceLister,
    private readonly known: KnownPods,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    const { publisher } = this;
    // Always ok (the sync loop waits for sourcesReady itself); the detail says which source is awaited.
    this.health.addReadiness('sources', () => {
      const snap = publisher.snapshot().sources;
      const waiting = snap.filter((s) => !s.ready).map((s) => s.source);
      return { ok: true, detail: snap.length === 0 ? 'no source configured' : waiting.length > 0 ? `waiting for ${waiting.join(', ')}` : `ready: ${snap.map((s) => `${s.source} (${s.pods.length} pods)`).join(', ')}` };
    });
    // The pods' first-seen times outlive this process: a pod the sync loop holds keeps its creationTimestamp.
    try {
      const stamps = await this.known.creationTimestamps();
      publisher.restoreFirstSeen(stamps);
      this.logger.info({ pods: stamps.size }, 'first-seen times of known pods restored from KV');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'cannot read the known pods from KV; pods seen again get a new creationTimestamp');
    }
    publisher.start(this.sources);
    this.objects.start();
    this.services.start();
  }

  onApplicationShutdown(): void {
    this.publisher.stop();
    this.objects.stop();
    this.services.stop();
  }
}
