/**
 * A whole node for end-to-end tests: a real nats-server, the services as
 * processes on the real containerd, static pods from a temporary manifest
 * directory, and what the node says about its pods: the v1 PodList the status
 * manager serves at GET /pods, the statuses the pod worker sends to the status
 * manager, the events, and containerd's own view. Its stop() fails the test
 * that leaks a sandbox or container.
 */
import { appendFileSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { V1PodList, V1PodStatus } from '@kubernetes/client-node';
import type { EventMessage, PodStatus, StatusCommandMessage } from '@app/contracts';
import { NatsCriClient, type Container } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { STATUS_GROUP, type ServiceName } from '@app/service';
import { freePort, freePorts, startModules, startNats, startService, type NatsServer, type ServiceProcess } from '../../deploy/local/stack.js';
import { removeCgroupTree } from '../bench/harness/agent.js';
import { runtimeAddress } from './runtime.js';

const dec = new TextDecoder();

export interface NodeStackOptions {
  node: string;
  services: ServiceName[];
  env?: Partial<Record<ServiceName, Record<string, string>>>;
  /**
   * The node joins a cluster: config-source and status-manager get this
   * KUBECONFIG (a test control plane's `kubeconfig(node)`,
   * test/support/control-plane.ts).
   */
  kubeconfig?: string;
  /**
   * `all`: the services run as modules of one process (TARGET, the
   * one-process mode, docs/adr/0016-one-process-mode.md), each still with
   * its own NATS user, connection name, port and env. `split`: one process
   * per service. Default: the KS_TARGET environment variable (KS_TARGET=all
   * runs an e2e file against the one-process mode, KS_TARGET=split with
   * every service alone); unset: as the launcher and compose run them, one
   * process per service but `status-manager`, which is the status group
   * (STATUS_GROUP: status-manager, kubelet-server, node-status and console
   * as modules of one process); `group` says so whatever KS_TARGET is.
   */
  target?: 'all' | 'split' | 'group';
  /** Told every log line a process of the stack prints, with its `<service>#<instance>` (the first module's, for one of several). */
  onLogLine?: (proc: string, line: string) => void;
}

export class NodeStack {
  nats!: NatsServer;
  nc!: NatsConnection;
  cri!: NatsCriClient;
  readonly dir = mkdtempSync(join(tmpdir(), 'ks-node-'));
  /**
   * The pods' cgroups go under this (CGROUP_ROOT), removed at stop: a stack
   * on another containerd of this machine (a helper's, the launcher's, the
   * conformance runner's) would otherwise take this one's pod cgroups under
   * the shared /kubepods for orphans and kill their processes.
   */
  readonly cgroupRoot = `/${basename(this.dir)}`;
  readonly manifests = join(this.dir, 'manifests');
  /** The kubelet server's HTTPS port (KUBELET_SERVER_PORT), chosen at start. */
  kubeletPort = 0;
  /** The HTTP ports of the status group's modules, chosen at start (the read port is kubelet-server's). */
  private groupPorts: Partial<Record<ServiceName, number>> = {};
  readonly procs = new Map<string, ServiceProcess>();
  /** Latest status by pod name, and every status in order. */
  readonly statuses = new Map<string, PodStatus>();
  readonly history: { pod: string; verb: string; status: PodStatus }[] = [];
  readonly events: EventMessage[] = [];
  /** Every pod status GET /pods served, by pod name, each time it changed. */
  readonly served: { pod: string; status: V1PodStatus }[] = [];
  private readonly lastServed = new Map<string, string>();

  constructor(readonly options: NodeStackOptions) {}

  /**
   * A service's environment. `status-manager` in `services` (and its options.env)
   * stands for the whole status group: what a test sets for it, the group's
   * other modules get too, as they once were one service.
   */
  env(service: ServiceName): Record<string, string> {
    const grouped = (STATUS_GROUP as readonly ServiceName[]).includes(service);
    const port = (s: ServiceName) => this.groupPorts[s] ?? this.procs.get(`${s}#0`)?.port;
    const consolePort = port('console');
    const readPort = port('kubelet-server');
    return {
      NODE_NAME: this.options.node,
      NATS_URL: this.nats.url,
      // KS_E2E_LOG_LEVEL=info (or debug), with KS_E2E_LOGS, for looking into a failure.
      LOG_LEVEL: process.env['KS_E2E_LOG_LEVEL'] ?? 'warn',
      POD_WORKER_SHARDS: '4',
      CGROUP_ROOT: this.cgroupRoot,
      ...(service === 'cri-gateway' ? { CONTAINER_RUNTIME_ENDPOINT: `unix://${runtimeAddress()}` } : {}),
      ...(service === 'config-source' ? { POD_MANIFEST_PATH: this.manifests, FILE_CHECK_FREQUENCY: '1s' } : {}),
      ...(this.options.kubeconfig && (service === 'config-source' || grouped) ? { KUBECONFIG: this.options.kubeconfig } : {}),
      // Image GC off (high threshold 100 %): every e2e file's stack shares one containerd, and a leader's GC on a full
      // disk would take the images another file's pods are about to use. test/image-gc.e2e.spec.ts turns it on.
      ...(service === 'sync-loop' ? { POD_LOGS_DIR: join(this.dir, 'logs'), LEGACY_CONTAINER_LOGS_DIR: join(this.dir, 'containers'), POD_ROOT_DIR: join(this.dir, 'pods'), IMAGE_GC_HIGH_THRESHOLD_PERCENT: '100' } : {}),
      ...(grouped ? { POD_LOGS_DIR: join(this.dir, 'logs'), POD_ROOT_DIR: join(this.dir, 'pods') } : {}),
      // The kubelet API server (it starts with KUBECONFIG) on a port of the stack's own, its certificate in the stack's
      // directory: never 10250, which another stack or a kubelet on this machine may hold.
      ...(grouped ? { KUBELET_SERVER_PORT: String(this.kubeletPort), KUBELET_CERT_DIR: join(this.dir, 'pki') } : {}),
      ...(service === 'kubelet-server' && consolePort ? { CONSOLE_URL: `http://127.0.0.1:${consolePort}` } : {}),
      ...(service === 'console' && readPort ? { KUBELET_READ_URL: `http://127.0.0.1:${readPort}` } : {}),
      ...(service === 'pod-worker' ? { POD_LOGS_DIR: join(this.dir, 'logs'), LEGACY_CONTAINER_LOGS_DIR: join(this.dir, 'containers'), POD_ROOT_DIR: join(this.dir, 'pods'), SHARD_LEASE_DURATION: '6s' } : {}),
      ...(grouped ? (this.options.env?.['status-manager'] ?? {}) : {}),
      ...(this.options.env?.[service] ?? {}),
    };
  }

  /** The services `status-manager` stands for in a test's list: the status group (in one process unless split). */
  private expand(services: readonly ServiceName[]): ServiceName[] {
    return [...new Set(services.flatMap((s) => (s === 'status-manager' ? [...STATUS_GROUP] : [s])))];
  }

  /** Whether every service runs in a process of its own (options.target, or KS_TARGET=split). */
  get split(): boolean {
    return (this.options.target ?? process.env['KS_TARGET']) === 'split';
  }

  async start(): Promise<void> {
    rmSync(this.manifests, { recursive: true, force: true });
    writeFileSync(join(this.dir, '.keep'), '');
    await import('node:fs/promises').then((fs) => fs.mkdir(this.manifests, { recursive: true }));
    // Its users held to this node's subjects and keys, as the launcher's and compose's are.
    this.nats = await startNats({ nodes: [this.options.node] });
    this.kubeletPort = await freePort();
    this.nc = await connect({ servers: this.nats.url, name: 'e2e-test', ...this.nats.auth() });
    this.cri = new NatsCriClient(this.nc, this.options.node, 'e2e-test');
    this.nc.subscribe(`kubelet.${this.options.node}.status.*.*`, {
      callback: (_e, m) => {
        // A test may send bad input on these subjects (the contract kit does): a callback that throws closes the connection.
        let body: StatusCommandMessage;
        try {
          body = JSON.parse(dec.decode(m.data)) as StatusCommandMessage;
        } catch {
          return;
        }
        if (typeof body.args !== 'object' || body.args === null) return;
        const pod = typeof body.args['podName'] === 'string' ? body.args['podName'] : '';
        const status = body.args['status'] as PodStatus | undefined;
        if (!pod || !status) return;
        this.statuses.set(pod, status);
        this.history.push({ pod, verb: m.subject.split('.')[3] ?? '', status });
      },
    });
    this.nc.subscribe(`kubelet.${this.options.node}.events.*`, {
      callback: (_e, m) => {
        try {
          this.events.push(JSON.parse(dec.decode(m.data)) as EventMessage);
        } catch {
          // not an event: bad input a test sent
        }
      },
    });
    await this.nc.flush();
    if (this.oneProcess) await this.startModules();
    else for (const s of this.expand(this.options.services)) if (!this.procs.has(`${s}#0`)) await this.startService(s);
  }

  /** Whether the services run as modules of one process (options.target, or KS_TARGET=all). */
  get oneProcess(): boolean {
    return (this.options.target ?? process.env['KS_TARGET']) === 'all';
  }

  /**
   * Starts `services` (default: the stack's) as modules of one process and
   * waits for every module's /readyz; each is then in `procs` as
   * `<service>#<instance>`, all on the same process.
   */
  async startModules(services: ServiceName[] = this.expand(this.options.services), instance = '0'): Promise<ServiceProcess[]> {
    const logDir = process.env['KS_E2E_LOGS'];
    const sink = this.sink(logDir ? join(logDir, `${this.options.node}-modules-${instance}.log`) : undefined, `${services[0] ?? 'modules'}#${instance}`);
    const ports: Partial<Record<ServiceName, number>> = {};
    const free = await freePorts(services.length);
    services.forEach((s, i) => (ports[s] = free[i]));
    this.groupPorts = ports;
    const modules = await startModules(services, (s) => this.env(s), { ports, instance, timeoutMs: 60_000, ...(sink ? { sink } : {}) });
    for (const m of modules) this.procs.set(`${m.service}#${instance}`, m);
    return modules;
  }

  /**
   * Starts one service, and waits for its /readyz. `status-manager` starts the
   * status group as one process (unless every service runs alone) and
   * returns the status manager's module; each module is in `procs`.
   */
  async startService(service: ServiceName, instance = '0'): Promise<ServiceProcess> {
    if (service === 'status-manager' && !this.split) {
      const modules = await this.startModules([...STATUS_GROUP], instance);
      const sm = modules.find((m) => m.service === 'status-manager');
      if (!sm) throw new Error('the status group started without its status manager');
      return sm;
    }
    // KS_E2E_LOGS=<dir> keeps each service's log lines there, for looking into a failure.
    const logDir = process.env['KS_E2E_LOGS'];
    const sink = this.sink(logDir ? join(logDir, `${this.options.node}-${service}-${instance}.log`) : undefined, `${service}#${instance}`);
    const sp = await startService(service, this.env(service), { port: await freePort(), instance, timeoutMs: 60_000, ...(sink ? { sink } : {}) });
    this.procs.set(`${service}#${instance}`, sp);
    return sp;
  }

  /** Where a process's lines go: the KS_E2E_LOGS file and the test's onLogLine, when either is set. */
  private sink(file: string | undefined, proc: string): ((line: string) => void) | undefined {
    const onLine = this.options.onLogLine;
    if (!file && !onLine) return undefined;
    return (line: string) => {
      if (file) appendFileSync(file, `${line}\n`);
      onLine?.(proc, line);
    };
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
    const pod = what.split(' ')[0] ?? '';
    throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}; last status: ${this.lastServed.get(pod) ?? JSON.stringify(this.statuses.get(pod))}`);
  }

  /**
   * The node's read port, as a user reaches it (127.0.0.1:10315 on a node):
   * the kubelet server's, which serves /pods, /containerLogs and
   * /stats/summary; the status manager's own port when the stack has no
   * kubelet server.
   */
  get api(): string {
    // The latest instance that still runs (a test that restarts the group starts instance 1 beside the dead 0).
    const find = (s: string) => [...this.procs.entries()].reverse().find(([k, p]) => k.startsWith(`${s}#`) && p.process.exitCode === null && p.process.signalCode === null)?.[1];
    const sp = find('kubelet-server') ?? find('status-manager');
    if (!sp) throw new Error('neither the kubelet server nor the status manager is running');
    return `http://127.0.0.1:${sp.port}`;
  }

  /** GET /pods on the read port, read as a v1 PodList with @kubernetes/client-node's types, as a client would. */
  async podList(): Promise<V1PodList> {
    const res = await fetch(`${this.api}/pods`);
    if (res.status !== 200) throw new Error(`GET /pods answered ${res.status}`);
    const list = ObjectSerializer.deserialize(await res.json(), 'V1PodList', '') as V1PodList;
    if (list.kind !== 'PodList') throw new Error(`GET /pods served a ${String(list.kind)}, not a PodList`);
    for (const p of list.items) {
      const pod = p.metadata?.name ?? '';
      const json = JSON.stringify(p.status);
      if (!p.status || this.lastServed.get(pod) === json) continue;
      this.lastServed.set(pod, json);
      this.served.push({ pod, status: p.status });
    }
    return list;
  }

  /** Waits until the pod's status, as GET /pods serves it, satisfies `pred`. */
  waitForPod(name: string, what: string, pred: (s: V1PodStatus) => boolean, timeoutMs = 30_000): Promise<V1PodStatus> {
    const pod = this.podName(name);
    return this.waitFor(`${pod} ${what}`, async () => {
      const s = (await this.podList()).items.find((p) => p.metadata?.name === pod && p.metadata.namespace === 'default')?.status;
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

  /**
   * The test's own cleanup, as a user's would go: every manifest removed, the
   * stack kills and removes the pods. A sandbox or container with this node's
   * label still in containerd after that is a leak: it fails the test (the
   * suite's after hook throws, listing them), once removed here so the next
   * test starts clean. Then everything stops.
   */
  async stop(): Promise<void> {
    let leaked: string[] = [];
    try {
      if (this.cri) {
        rmSync(this.manifests, { recursive: true, force: true });
        await import('node:fs/promises').then((fs) => fs.mkdir(this.manifests, { recursive: true }));
        await this.waitFor('every pod of the test to be gone from containerd', async () => ((await leftovers(this.cri, this.options.node)).length === 0 ? true : undefined), 60_000).catch(() => undefined);
        leaked = (await leftovers(this.cri, this.options.node)).map((x) => x.what);
      }
    } finally {
      // Anything left behind goes too, while cri-gateway still runs.
      if (this.cri) await removeLeftovers(this.cri, this.options.node);
      // Modules of one process share it: it is stopped once (stopping an exited process returns at once).
      for (const p of [...this.procs.values()].reverse()) await p.stop(10_000);
      await this.nc?.close();
      await this.nats?.stop();
      rmSync(this.dir, { recursive: true, force: true });
      removeCgroupTree(this.cgroupRoot);
    }
    if (leaked.length > 0) throw new Error(leakMessage(this.options.node, leaked));
  }
}

function leakMessage(node: string, leaked: string[]): string {
  return `node ${node} leaked ${leaked.length} sandbox(es)/container(s) in containerd after its own cleanup:\n  ${leaked.join('\n  ')}`;
}

/**
 * For tests that make sandboxes themselves, after their own cleanup: anything
 * with `node`'s label still in containerd is removed, and the test fails,
 * listing it.
 */
export async function failOnLeftovers(cri: NatsCriClient, node: string): Promise<void> {
  const left = await leftovers(cri, node);
  if (left.length === 0) return;
  await removeLeftovers(cri, node);
  throw new Error(leakMessage(node, left.map((x) => x.what)));
}

/** The sandboxes and containers in containerd that carry `node`'s label (KubeletLabels.node), described for a failure message. */
export async function leftovers(cri: NatsCriClient, node: string): Promise<{ kind: 'sandbox' | 'container'; id: string; what: string }[]> {
  const filter = { labelSelector: { [KubeletLabels.node]: node } };
  const [sandboxes, containers] = await Promise.all([cri.runtime('ListPodSandbox', { filter }), cri.runtime('ListContainers', { filter })]);
  return [
    ...sandboxes.items.map((s) => ({ kind: 'sandbox' as const, id: s.id, what: `sandbox ${s.id.slice(0, 12)} of pod ${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''} (${s.state})` })),
    ...containers.containers.map((c) => ({
      kind: 'container' as const,
      id: c.id,
      what: `container ${c.id.slice(0, 12)} ${c.labels[KubeletLabels.podName] ?? ''}/${c.metadata?.name ?? ''} attempt ${c.metadata?.attempt ?? 0} (${c.state})`,
    })),
  ];
}

/** Removes every sandbox and container of `node` from containerd, whatever state they are in. */
export async function removeLeftovers(cri: NatsCriClient, node: string): Promise<void> {
  const left = await leftovers(cri, node).catch(() => []);
  for (const x of left.filter((l) => l.kind === 'container')) {
    await cri.runtime('StopContainer', { containerId: x.id, timeout: '0' }).catch(() => undefined);
    await cri.runtime('RemoveContainer', { containerId: x.id }).catch(() => undefined);
  }
  for (const x of left.filter((l) => l.kind === 'sandbox')) {
    await cri.runtime('StopPodSandbox', { podSandboxId: x.id }).catch(() => undefined);
    await cri.runtime('RemovePodSandbox', { podSandboxId: x.id }).catch(() => undefined);
  }
}
