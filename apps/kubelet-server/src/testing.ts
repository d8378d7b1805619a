/** The kubelet API server's fakes (STYLE.md 9): reviews, pods, runtime, logs and the proxy, in memory, recording their calls. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pod, PodList, SyncLoopMonitorRecord } from '@app/contracts';
import { AccessReviewer, ContainerLogServer, KubeletPods, KubeletServerError, NodeStats, StreamingRuntime, SyncLoopMonitorReader, TokenReviewer, UpgradeProxy, type NodeRequestAttributes, type StreamOptions, type UserInfo } from './ports.js';

export class FakeTokenReviewer extends TokenReviewer {
  readonly users = new Map<string, UserInfo>();
  readonly calls: string[] = [];
  failing?: Error;
  review(token: string): Promise<UserInfo | undefined> {
    this.calls.push(token);
    if (this.failing) return Promise.reject(this.failing);
    return Promise.resolve(this.users.get(token));
  }
}

export class FakeAccessReviewer extends AccessReviewer {
  /** `<user> <verb> <subresource>` allowed. */
  readonly allowed = new Set<string>();
  readonly calls: string[] = [];
  failing?: Error;
  review(a: NodeRequestAttributes): Promise<{ allowed: boolean }> {
    const key = `${a.user.name} ${a.verb} ${a.subresource}`;
    this.calls.push(key);
    if (this.failing) return Promise.reject(this.failing);
    return Promise.resolve({ allowed: this.allowed.has(key) || a.user.groups.includes('system:masters') });
  }
}

export class FakeKubeletPods extends KubeletPods {
  readonly pods: Pod[] = [];
  listPods(): Promise<PodList> {
    return Promise.resolve({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: this.pods });
  }
  getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return Promise.resolve(this.pods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name));
  }
}

export class FakeStreamingRuntime extends StreamingRuntime {
  readonly calls: { method: string; args: unknown[] }[] = [];
  /** The streaming server's base URL the answers point to. */
  base = 'http://127.0.0.1:1';
  runOutput = Buffer.from('');
  sandboxes = new Set<string>();
  getExec(containerId: string, cmd: string[], opts: StreamOptions): Promise<URL> {
    this.calls.push({ method: 'Exec', args: [containerId, cmd, opts] });
    return Promise.resolve(new URL(`${this.base}/exec/token-${containerId}`));
  }
  getAttach(containerId: string, opts: StreamOptions): Promise<URL> {
    this.calls.push({ method: 'Attach', args: [containerId, opts] });
    return Promise.resolve(new URL(`${this.base}/attach/token-${containerId}`));
  }
  getPortForward(podUid: string, ports: number[]): Promise<URL> {
    this.calls.push({ method: 'PortForward', args: [podUid, ports] });
    if (!this.sandboxes.has(podUid)) return Promise.reject(new KubeletServerError(404, `no sandbox of pod ${podUid} in the runtime`));
    return Promise.resolve(new URL(`${this.base}/portforward/token-${podUid}`));
  }
  runInContainer(containerId: string, cmd: string[]): Promise<Buffer> {
    this.calls.push({ method: 'ExecSync', args: [containerId, cmd] });
    return Promise.resolve(this.runOutput);
  }
}

export class FakeContainerLogServer extends ContainerLogServer {
  readonly calls: { target: { namespace: string; pod: string; container: string }; query: Record<string, unknown> }[] = [];
  serve(target: { namespace: string; pod: string; container: string }, query: Record<string, unknown>, _req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.calls.push({ target, query });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`logs of ${target.container}\n`);
    return Promise.resolve();
  }
}

export class FakeNodeStats extends NodeStats {
  summary(): Promise<unknown> {
    return Promise.resolve({ node: { nodeName: 'fake' }, pods: [] });
  }
  resourceMetrics(): Promise<string> {
    return Promise.resolve('# HELP scrape_error\n');
  }
  metrics(): Promise<string> {
    return Promise.resolve('# HELP kubelet_running_pods Number of pods that have a running pod sandbox\n');
  }
}

/** Records where each stream would go, and answers the client 101 then closes. */
export class FakeUpgradeProxy extends UpgradeProxy {
  readonly locations: URL[] = [];
  proxy(_req: IncomingMessage, client: Duplex, _head: Buffer, location: URL): Promise<void> {
    this.locations.push(location);
    client.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
    return Promise.resolve();
  }
}

/** A running pod with one running container `c` (ID `cid-<name>`). */
export function runningPod(namespace: string, name: string, uid: string, containers: { name: string; tty?: boolean }[] = [{ name: 'c' }]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, uid },
    spec: { containers: containers.map((c) => ({ name: c.name, image: 'busybox', ...(c.tty ? { tty: true } : {}) })) },
    status: {
      phase: 'Running',
      containerStatuses: containers.map((c) => ({ name: c.name, containerID: `containerd://cid-${c.name}`, image: 'busybox', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } })),
    },
  };
}

/** The sync loop monitor as a sync loop left it; `failing` makes the read reject. */
export class FakeSyncLoopMonitorReader extends SyncLoopMonitorReader {
  record?: SyncLoopMonitorRecord;
  failing?: Error;
  get(): Promise<SyncLoopMonitorRecord | undefined> {
    return this.failing ? Promise.reject(this.failing) : Promise.resolve(this.record);
  }
}
