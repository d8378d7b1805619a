import { readFileSync } from 'node:fs';
import { Controller, Get, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { Subscription } from '@nats-io/transport-node';
import { Clock, SystemClock } from '@app/clock';
import { MessageTypes, Subjects, decodeMessage, parseJson, shardOf, type PodRecord } from '@app/contracts';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri';
import { kvKey, readEntries, type KV } from '@app/nats';
import { Counter, Gauge, Histogram, type Logger, type Registry } from '@app/observability';
import { KvPodCache } from '@app/pod-cache';
import { HealthChecks, METRICS_REGISTRY, SERVICE_CONTEXT, type ServiceContext } from '@app/service';
import { CriHookRunner, FsPodDirectories, KvWorkerStore, NatsEventRecorder, NatsPodWorkerOutbox, NatsWorkQueue, ProbeResultsCache } from './adapters.js';
import { CrashLoopBackOff } from './backoff.js';
import { podTerminationGracePeriod } from './grace-period.js';
import { KubeletSync } from './kubelet-sync.js';
import { PodWorkers } from './pod-workers.js';
import type { NodeFacts } from './runtime-config.js';
import { ImagePuller, RuntimeManager } from './runtime-manager.js';
import type { PodWorkerConfig } from './service.js';
import { KvLeaseStore, ShardManager } from './shards.js';

function hostDns(): NodeFacts['hostDns'] {
  try {
    const lines = readFileSync('/etc/resolv.conf', 'utf8').split('\n');
    const words = (k: string) => lines.filter((l) => l.startsWith(`${k} `)).flatMap((l) => l.split(/\s+/).slice(1)).filter(Boolean);
    return { servers: words('nameserver'), searches: words('search'), options: words('options') };
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

/** Everything the pod worker runs on, built once. */
export class PodWorkerService {
  readonly workers: PodWorkers;
  readonly probes = new ProbeResultsCache();
  readonly shards: ShardManager;
  private readonly cache: KvPodCache;
  private readonly subs = new Map<number, Subscription>();
  private readonly pods: KV;
  private readonly logger: Logger;

  constructor(
    private readonly ctx: ServiceContext<PodWorkerConfig>,
    clock: Clock,
    registry: Registry,
  ) {
    const cfg = ctx.config;
    const { workers: workersKv, leases, pods, podCache } = ctx.buckets;
    if (!workersKv || !leases || !pods || !podCache) throw new Error('pod-worker needs the workers, leases, pods and pod-cache buckets');
    this.pods = pods;
    this.logger = ctx.logger.child({ component: 'pod-workers' });
    const node: NodeFacts = { nodeName: cfg.NODE_NAME, hostIP: cfg.NODE_IP, logRoot: cfg.POD_LOGS_DIR, podRoot: cfg.POD_ROOT_DIR, hostDns: hostDns() };
    const cri = new NatsCriClient(ctx.connection, cfg.NODE_NAME, 'pod-worker', { ...DEFAULT_CRI_TIMEOUTS, requestMs: cfg.RUNTIME_REQUEST_TIMEOUT, pullMs: cfg.IMAGE_PULL_TIMEOUT });
    const events = new NatsEventRecorder(ctx.bus, cfg.NODE_NAME);
    const registers = [registry];
    const started = new Counter({ name: 'kubelet_started_containers_total', help: 'Cumulative number of containers started', labelNames: ['container_type'], registers });
    const startedErrors = new Counter({ name: 'kubelet_started_containers_errors_total', help: 'Cumulative number of errors when starting containers', labelNames: ['container_type', 'code'], registers });
    const startedPods = new Counter({ name: 'kubelet_started_pods_total', help: 'Cumulative number of pods started', registers });
    const startedPodsErrors = new Counter({ name: 'kubelet_started_pods_errors_total', help: 'Cumulative number of errors when starting pods', registers });
    const runtime = new RuntimeManager(
      cri,
      new ImagePuller(cri, events, clock, { initialMs: cfg.CRASHLOOP_BACKOFF_INITIAL, maxMs: cfg.CRASHLOOP_BACKOFF_MAX }),
      new CrashLoopBackOff({ initialMs: cfg.CRASHLOOP_BACKOFF_INITIAL, maxMs: cfg.CRASHLOOP_BACKOFF_MAX }),
      new CriHookRunner(cri, cfg.NODE_IP),
      events,
      node,
      clock,
      ctx.logger.child({ component: 'runtime-manager' }),
      {
        startedContainer: (type, failed, code) => (failed ? startedErrors.inc({ container_type: type, code: code ?? '' }) : started.inc({ container_type: type })),
        startedPod: (failed) => (failed ? startedPodsErrors.inc() : startedPods.inc()),
      },
    );
    this.cache = new KvPodCache(podCache, cfg.NODE_NAME);
    const podStart = new Histogram({ name: 'kubelet_pod_start_duration_seconds', help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run', buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600], registers });
    const restarted = new Counter({ name: 'kubelet_restarted_pods_total', help: 'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)', labelNames: ['static'], registers });
    const syncer = new KubeletSync(runtime, cri, new FsPodDirectories(node), new NatsPodWorkerOutbox(ctx.bus, cfg.NODE_NAME), this.probes, clock, ctx.logger.child({ component: 'sync' }), cfg.NODE_IP, (s) => podStart.observe(s));
    const duration = new Histogram({ name: 'kubelet_pod_worker_duration_seconds', help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync', labelNames: ['operation_type'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers });
    this.workers = new PodWorkers(syncer, new KvWorkerStore(workersKv, cfg.NODE_NAME), new NatsWorkQueue(ctx.bus, cfg.NODE_NAME), this.cache, clock, this.logger, podTerminationGracePeriod, { resyncIntervalMs: cfg.SYNC_FREQUENCY, backOffMs: cfg.POD_SYNC_BACKOFF }, { syncDuration: (op, s) => duration.observe({ operation_type: op }, s), restartedPod: (isStatic) => restarted.inc({ static: String(isStatic) }) });
    const workers = this.workers;
    new Gauge({ name: 'kubelet_working_pods', help: 'Number of pods the kubelet is actually running, broken down by lifecycle phase.', labelNames: ['lifecycle'], registers, collect() {
      const w = workers.working;
      this.set({ lifecycle: 'sync' }, w.sync);
      this.set({ lifecycle: 'terminating' }, w.terminating);
      this.set({ lifecycle: 'terminated' }, w.terminated);
    } });
    this.shards = new ShardManager(new KvLeaseStore(leases, cfg.NODE_NAME), clock, this.logger, { shards: cfg.POD_WORKER_SHARDS, instance: ctx.identity.connectionName, leaseMs: cfg.SHARD_LEASE_DURATION, renewMs: Math.max(1000, Math.floor(cfg.SHARD_LEASE_DURATION / 3)) }, (s) => this.acquire(s), (s) => this.lose(s));
  }

  async start(): Promise<void> {
    await this.cache.start();
    this.shards.start();
  }

  async stop(): Promise<void> {
    await this.shards.stop();
    await this.workers.stop();
    this.cache.stop();
  }

  /** A shard is ours: follow its work subject, and resync its pods from the podManager and the workers' records. */
  private async acquire(shard: number): Promise<void> {
    const cfg = this.ctx.config;
    const subject = Subjects.work.wildcard(cfg.NODE_NAME, shard);
    this.subs.set(
      shard,
      this.ctx.connection.subscribe(subject, {
        callback: (err, msg) => {
          if (err) return;
          try {
            const update = decodeMessage(MessageTypes.updatePodOptions, parseJson(msg.data));
            void this.workers.updatePod(update).catch((e: unknown) => this.logger.error({ err: (e as Error).message }, 'UpdatePod failed'));
          } catch (e) {
            this.logger.warn({ subject: msg.subject, err: (e as Error).message }, 'dropped a malformed work message');
          }
        },
      }),
    );
    this.ctx.addSubjects([subject]);
    const resumeFrom = Date.now();
    let resynced = 0;
    for (const [uid, record] of await readEntries<PodRecord>(this.pods, kvKey(cfg.NODE_NAME, 'pod'))) {
      if (shardOf(uid, cfg.POD_WORKER_SHARDS) !== shard || !record.admitted) continue;
      await this.workers.updatePod({ type: MessageTypes.updatePodOptions, updateType: record.terminationRequested ? 'SyncPodKill' : 'SyncPodSync', startTime: new Date().toISOString(), pod: record.pod }, resumeFrom);
      resynced++;
    }
    this.logger.info({ shard, resynced }, 'resynced the pods of a shard');
  }

  private lose(shard: number): void {
    this.subs.get(shard)?.unsubscribe();
    this.subs.delete(shard);
  }
}

/** The probe results the pod worker needs (liveness and startup failures restart containers). */
@Controller()
export class PodWorkerController {
  constructor(private readonly svc: PodWorkerService) {}

  @EventPattern(Subjects.probeResult.pattern)
  onProbe(@Payload() data: unknown): void {
    this.svc.probes.observe(decodeMessage(MessageTypes.probeResult, data));
  }

  @Get('workers')
  state(): unknown {
    return { shards: this.svc.shards.ownedShards, working: this.svc.workers.working };
  }
}

/** podWorkers, syncPod, the runtime manager's SyncPod / computePodActions, killPod. */
@Module({
  controllers: [PodWorkerController],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: PodWorkerService, inject: [SERVICE_CONTEXT, Clock, METRICS_REGISTRY], useFactory: (ctx: ServiceContext<PodWorkerConfig>, clock: Clock, r: Registry) => new PodWorkerService(ctx, clock, r) },
  ],
})
export class PodWorkerModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly svc: PodWorkerService,
    @Inject(HealthChecks) private readonly health: HealthChecks,
  ) {}

  async onModuleInit(): Promise<void> {
    this.health.addReadiness('shards', () => ({ ok: true, detail: `owns shards [${this.svc.shards.ownedShards.join(', ')}]` }));
    await this.svc.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.svc.stop();
  }
}
