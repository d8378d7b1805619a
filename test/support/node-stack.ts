/**
 * A whole node for end-to-end tests: a real nats-server, the services as
 * processes on the real containerd, static pods from a temporary manifest
 * directory, and what the node says about its pods: the statuses the pod
 * worker sends to the status manager, the events, and containerd's own view.
 */
import { appendFileSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { EventMessage, PodStatus, StatusCommandMessage } from '@app/contracts';
import { NatsCriClient, type Container } from '@app/cri';
import type { ServiceName } from '@app/service';
import { freePort, startNats, startService, type NatsServer, type ServiceProcess } from '../../deploy/local/stack.js';
import { runtimeAddress } from './runtime.js';

const dec = new TextDecoder();

export interface NodeStackOptions {
  node: string;
  services: ServiceName[];
  env?: Partial<Record<ServiceName, Record<string, string>>>;
}

export class NodeStack {
  nats!: NatsServer;
  nc!: NatsConnection;
  cri!: NatsCriClient;
  readonly dir = mkdtempSync(join(tmpdir(), 'ks-node-'));
  readonly manifests = join(this.dir, 'manifests');
  readonly procs = new Map<string, ServiceProcess>();
  /** Latest status by pod name, and every status in order. */
  readonly statuses = new Map<string, PodStatus>();
  readonly history: { pod: string; verb: string; status: PodStatus }[] = [];
  readonly events: EventMessage[] = [];

  constructor(readonly options: NodeStackOptions) {}

  env(service: ServiceName): Record<string, string> {
    return {
      NODE_NAME: this.options.node,
      NATS_URL: this.nats.url,
      LOG_LEVEL: 'warn',
      POD_WORKER_SHARDS: '4',
      ...(service === 'cri-gateway' ? { CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` } : {}),
      ...(service === 'config-source' ? { POD_MANIFEST_PATH: this.manifests, FILE_CHECK_FREQUENCY: '1s' } : {}),
      ...(service === 'pod-worker' ? { POD_LOGS_DIR: join(this.dir, 'logs'), POD_ROOT_DIR: join(this.dir, 'pods'), SHARD_LEASE_DURATION: '6s' } : {}),
      ...(this.options.env?.[service] ?? {}),
    };
  }

  async start(): Promise<void> {
    rmSync(this.manifests, { recursive: true, force: true });
    writeFileSync(join(this.dir, '.keep'), '');
    await import('node:fs/promises').then((fs) => fs.mkdir(this.manifests, { recursive: true }));
    this.nats = await startNats();
    this.nc = await connect({ servers: this.nats.url, name: 'e2e-test' });
    this.cri = new NatsCriClient(this.nc, this.options.node, 'e2e-test');
    this.nc.subscribe(`kubelet.${this.options.node}.status.*.*`, {
      callback: (_e, m) => {
        const body = JSON.parse(dec.decode(m.data)) as StatusCommandMessage;
        const pod = typeof body.args['podName'] === 'string' ? body.args['podName'] : '';
        const status = body.args['status'] as PodStatus | undefined;
        if (!pod || !status) return;
        this.statuses.set(pod, status);
        this.history.push({ pod, verb: m.subject.split('.')[3] ?? '', status });
      },
    });
    this.nc.subscribe(`kubelet.${this.options.node}.events.*`, { callback: (_e, m) => void this.events.push(JSON.parse(dec.decode(m.data)) as EventMessage) });
    await this.nc.flush();
    for (const s of this.options.services) await this.startService(s);
  }

  async startService(service: ServiceName, instance = '0'): Promise<ServiceProcess> {
    // KS_E2E_LOGS=<dir> keeps each service's log lines there, for looking into a failure.
    const logDir = process.env['KS_E2E_LOGS'];
    const sink = logDir ? (line: string) => appendFileSync(join(logDir, `${this.options.node}-${service}-${instance}.log`), `${line}\n`) : undefined;
    const sp = await startService(service, this.env(service), { port: await freePort(), instance, timeoutMs: 60_000, ...(sink ? { sink } : {}) });
    this.procs.set(`${service}#${instance}`, sp);
    return sp;
  }

  /** The static pod's name on this node. */
  podName(name: string): string {
    return `${name}-${this.options.node}`;
  }

  writeManifest(name: string, yaml: string): void {
    writeFileSync(join(this.manifests, `${name}.yaml`), yaml);
  }

  removeManifest(name: string): void {
    unlinkSync(join(this.manifests, `${name}.yaml`));
  }

  async waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      try {
        const v = await fn();
        if (v !== undefined && v !== false) return v;
      } catch (err) {
        last = err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}; last status: ${JSON.stringify(this.statuses.get(what.split(' ')[0] ?? ''))}`);
  }

  /** Waits until the pod's latest status satisfies `pred`. */
  waitForStatus(name: string, what: string, pred: (s: PodStatus) => boolean, timeoutMs = 30_000): Promise<PodStatus> {
    const pod = this.podName(name);
    return this.waitFor(`${pod} ${what}`, () => {
      const s = this.statuses.get(pod);
      return s && pred(s) ? s : undefined;
    }, timeoutMs);
  }

  /** The pod's containers in containerd, by name, newest first. */
  async containers(name: string): Promise<Container[]> {
    const res = await this.cri.runtime('ListContainers', { filter: { labelSelector: { 'io.kubernetes.pod.name': this.podName(name), 'io.kubernetes.pod.namespace': 'default' } } });
    return res.containers.sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)));
  }

  async sandboxes(name: string) {
    return (await this.cri.runtime('ListPodSandbox', { filter: { labelSelector: { 'io.kubernetes.pod.name': this.podName(name), 'io.kubernetes.pod.namespace': 'default' } } })).items;
  }

  eventsOf(name: string): EventMessage[] {
    return this.events.filter((e) => e.involvedObject.name === this.podName(name));
  }

  /** Removes every manifest, waits for the pods to be gone from containerd, then stops everything. */
  async stop(): Promise<void> {
    try {
      rmSync(this.manifests, { recursive: true, force: true });
      await import('node:fs/promises').then((fs) => fs.mkdir(this.manifests, { recursive: true }));
      await this.waitFor('every pod of the test to be gone from containerd', async () => {
        const res = await this.cri.runtime('ListPodSandbox', {});
        return res.items.every((s) => !(s.labels['io.kubernetes.pod.name'] ?? '').endsWith(`-${this.options.node}`)) ? true : undefined;
      }, 60_000).catch(() => undefined);
    } finally {
      // Anything a failed test left behind goes too, while cri-gateway still runs.
      const left = await this.cri?.runtime('ListPodSandbox', {}).catch(() => ({ items: [] }));
      for (const sb of left?.items ?? []) {
        if (!(sb.labels['io.kubernetes.pod.name'] ?? '').endsWith(`-${this.options.node}`)) continue;
        await this.cri.runtime('StopPodSandbox', { podSandboxId: sb.id }).catch(() => undefined);
        await this.cri.runtime('RemovePodSandbox', { podSandboxId: sb.id }).catch(() => undefined);
      }
      for (const p of [...this.procs.values()].reverse()) await p.stop(10_000);
      await this.nc?.close();
      await this.nats?.stop();
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
