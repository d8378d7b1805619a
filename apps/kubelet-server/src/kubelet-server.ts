/**
 * The kubelet API server: k8s.io/kubernetes pkg/kubelet/server/server.go
 * (the secure server of ListenAndServeKubeletServer: InstallAuthFilter,
 * then the handlers), served on its own HTTPS port beside status-manager's
 * plain one (adapters/https-listener.ts). Every request is authenticated
 * and authorized first (auth.ts), then routed:
 *
 *   GET  /healthz                                       ok, or 500 while the sync loop is stuck (healthz.ts)
 *   GET  /pods                                          the v1 PodList, as the plain port's /pods
 *   GET  /containerLogs/<ns>/<pod>/<container>          the log server (../logs/)
 *   GET|POST /exec/<ns>/<pod>[/<uid>]/<container>       \
 *   GET|POST /attach/<ns>/<pod>[/<uid>]/<container>      > upgrade requests: the runtime's streaming URL
 *   GET|POST /portForward/<ns>/<pod>[/<uid>]            /  (CRI Exec / Attach / PortForward), proxied to
 *   POST /run/<ns>/<pod>[/<uid>]/<container>            CRI ExecSync, stdout then stderr
 *   GET  /stats/summary, /metrics/resource              as the plain port's
 *   GET  /metrics                                       the kubelet's own metrics (this process's registry)
 *   GET  /logs/[<path>]                                 the node's /var/log (logServer: a listing or a file)
 *
 * Streaming (exec, attach, port-forward), as the upstream kubelet since the
 * runtime serves its own streams (1.20+): the options checked
 * (stream-options.ts), the container found in the pod's status (running,
 * its container ID), the runtime asked for a URL on its streaming server,
 * and the client's upgrade request proxied there (UpgradeProxy), SPDY/3.1 or
 * websocket alike.
 *
 * Failures: 401 Unauthorized (no or bad credentials), 403 Forbidden (user=...)
 * denied, 400 bad options or a streaming route without an upgrade, 404 an
 * unknown pod or container (or path), 405 a wrong method, 500 the runtime's
 * or the apiserver's failures (a CRI NotFound is 404).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ContainerStatus, Pod } from '@app/contracts';
import { CriError, httpStatusOf } from '@app/cri/client';
import type { Logger } from '@app/observability';
import { nodeRequestAttributes, type ClientCertificate, type KubeletAuthenticator, type KubeletAuthorizer } from './auth.js';
import { ContainerLogServer, KubeletPods, KubeletServerError, NodeStats, StreamingRuntime, SystemLogServer, UpgradeProxy } from './ports.js';
import { execCommand, isWebSocketRequest, parsePortForwardPorts, parseStreamOptions, runCommand } from './stream-options.js';
import { writeError } from './adapters/net-upgrade-proxy.js';
import { runHealthz, type HealthzCheck } from './healthz.js';

/** Where the answer goes: a plain response, or the client's socket taken over for an upgrade. */
type Exchange = { kind: 'plain'; res: ServerResponse } | { kind: 'upgrade'; socket: Duplex; head: Buffer };

/** A container of a pod found for a stream or a run. */
interface FoundContainer {
  pod: Pod;
  containerId: string;
}

export interface KubeletServerDeps {
  authenticator: KubeletAuthenticator;
  authorizer: KubeletAuthorizer;
  pods: KubeletPods;
  runtime: StreamingRuntime;
  logs: ContainerLogServer;
  stats: NodeStats;
  proxy: UpgradeProxy;
  /** `/healthz`'s checks (kubeletHealthzChecks); none: always ok. */
  healthz?: readonly HealthzCheck[];
  logger: Logger;
  /** `/logs/`: the node's log files (enableSystemLogHandler); none: 404. */
  systemLogs?: SystemLogServer;
}

export class KubeletServer {
  constructor(
    private readonly deps: KubeletServerDeps,
    private readonly nodeName: string,
  ) {}

  /** A plain request; `certificate` is the client's, when it sent one over TLS. */
  async handle(req: IncomingMessage, res: ServerResponse, certificate?: ClientCertificate): Promise<void> {
    await this.serve(req, { kind: 'plain', res }, certificate);
  }

  /** An upgrade request (the server's 'upgrade' event): the socket is ours from now on. */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, certificate?: ClientCertificate): Promise<void> {
    await this.serve(req, { kind: 'upgrade', socket, head }, certificate);
  }

  private async serve(req: IncomingMessage, ex: Exchange, certificate?: ClientCertificate): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    try {
      const authn = await this.deps.authenticator.authenticate({ headers: req.headers, ...(certificate ? { certificate } : {}) });
      if (!authn.ok) {
        this.deps.logger.debug({ path: url.pathname, reason: authn.reason }, 'kubelet API: unauthenticated request');
        return reply(ex, 401, 'Unauthorized');
      }
      const decision = await this.deps.authorizer.authorize(nodeRequestAttributes(authn.user, req.method, url.pathname, this.nodeName));
      if (!decision.allowed) {
        this.deps.logger.debug({ path: url.pathname, user: authn.user.name, status: decision.status }, 'kubelet API: request not authorized');
        return reply(ex, decision.status, decision.message);
      }
      await this.route(req, url, ex);
    } catch (err) {
      const status = err instanceof KubeletServerError ? err.status : err instanceof CriError ? httpStatusOf(err.code) : 500;
      if (status >= 500) this.deps.logger.warn({ err: (err as Error).message, path: url.pathname }, 'kubelet API: request failed');
      reply(ex, status, err instanceof CriError ? err.description : (err as Error).message);
    }
  }

  private async route(req: IncomingMessage, url: URL, ex: Exchange): Promise<void> {
    const seg = segments(url.pathname);
    const method = req.method ?? 'GET';
    const [root = '', ...rest] = seg;
    const allow = (...methods: string[]) => {
      if (!methods.includes(method)) throw new KubeletServerError(405, `405: Method Not Allowed`);
    };
    switch (root) {
      case 'healthz':
        if (rest.length > 0) break;
        allow('GET', 'HEAD');
        return plain(ex, async (res) => {
          const r = await runHealthz(this.deps.healthz ?? [], url.searchParams.has('verbose'));
          if (r.failures.length > 0) this.deps.logger.warn({ failures: r.failures }, 'healthz check failed');
          sendText(res, r.status, r.body);
        });
      case 'pods':
        if (rest.length > 0) break;
        allow('GET');
        return plain(ex, async (res) => sendJson(res, 200, JSON.stringify(await this.deps.pods.listPods())));
      case 'containerLogs': {
        if (rest.length !== 3) break;
        allow('GET');
        const [namespace = '', pod = '', container = ''] = rest;
        return plain(ex, (res) => this.deps.logs.serve({ namespace, pod, container }, queryRecord(url.searchParams), req, res));
      }
      case 'exec':
      case 'attach': {
        if (rest.length !== 3 && rest.length !== 4) break;
        allow('GET', 'POST');
        const [namespace = '', pod = ''] = rest;
        const uid = rest.length === 4 ? rest[2] : undefined;
        const container = rest[rest.length - 1] ?? '';
        const opts = parseStreamOptions(url.searchParams);
        const upgrade = requireUpgrade(ex);
        const found = await this.findContainer(namespace, pod, uid, container);
        const location =
          root === 'exec'
            ? await this.deps.runtime.getExec(found.containerId, execCommand(url.searchParams), opts)
            : // Attach's tty is the container's own (it cannot change once started), as GetAttach takes it from the spec.
              await this.deps.runtime.getAttach(found.containerId, { ...opts, tty: containerSpec(found.pod, container)?.tty === true });
        return this.deps.proxy.proxy(req, upgrade.socket, upgrade.head, location);
      }
      case 'portForward': {
        if (rest.length !== 2 && rest.length !== 3) break;
        allow('GET', 'POST');
        const [namespace = '', name = '', uid] = rest;
        const ports = parsePortForwardPorts(url.searchParams, isWebSocketRequest(req.headers));
        const upgrade = requireUpgrade(ex);
        const pod = await this.deps.pods.getPod(namespace, name);
        if (!pod) throw new KubeletServerError(404, 'pod does not exist');
        if (uid !== undefined && uid !== '' && pod.metadata.uid !== uid) throw new KubeletServerError(404, 'pod not found');
        const location = await this.deps.runtime.getPortForward(pod.metadata.uid ?? '', ports);
        return this.deps.proxy.proxy(req, upgrade.socket, upgrade.head, location);
      }
      case 'run': {
        if (rest.length !== 3 && rest.length !== 4) break;
        allow('POST');
        const [namespace = '', pod = ''] = rest;
        const uid = rest.length === 4 ? rest[2] : undefined;
        const found = await this.findContainer(namespace, pod, uid, rest[rest.length - 1] ?? '');
        const out = await this.deps.runtime.runInContainer(found.containerId, runCommand(url.searchParams));
        return plain(ex, (res) => sendJson(res, 200, out));
      }
      case 'logs': {
        // http.StripPrefix("/logs/"): `/logs` alone is not found; `/logs/...` is the FileServer's.
        const systemLogs = this.deps.systemLogs;
        if (!systemLogs || url.pathname === '/logs') break;
        allow('GET', 'HEAD');
        return plain(ex, (res) => systemLogs.serve(rest, url.pathname.endsWith('/'), req, res));
      }
      case 'stats':
        if (rest.length !== 1 || rest[0] !== 'summary') break;
        allow('GET');
        return plain(ex, async (res) => sendJson(res, 200, JSON.stringify(await this.deps.stats.summary())));
      case 'metrics':
        // /metrics (the kubelet's, which the e2e framework reads through the apiserver's node proxy) and /metrics/resource.
        if (rest.length > 1 || (rest.length === 1 && rest[0] !== 'resource')) break;
        allow('GET');
        return plain(ex, async (res) => {
          const text = rest.length === 0 ? await this.deps.stats.metrics() : await this.deps.stats.resourceMetrics();
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
          res.end(text);
        });
      default:
        break;
    }
    throw new KubeletServerError(404, '404 page not found');
  }

  /**
   * findContainer: the pod by namespace and name (and UID when given), the
   * container by name among its running containers, its ID from the status.
   */
  private async findContainer(namespace: string, name: string, uid: string | undefined, container: string): Promise<FoundContainer> {
    const pod = await this.deps.pods.getPod(namespace, name);
    if (!pod) throw new KubeletServerError(404, 'pod does not exist');
    if (uid !== undefined && uid !== '' && pod.metadata.uid !== uid) throw new KubeletServerError(404, `pod not found ("${name}_${namespace}")`);
    const s = pod.status;
    const statuses: ContainerStatus[] = [...(s?.containerStatuses ?? []), ...(s?.initContainerStatuses ?? []), ...(s?.ephemeralContainerStatuses ?? [])];
    const status = statuses.find((c) => c.name === container && c.state?.running !== undefined && c.containerID);
    if (!status?.containerID) throw new KubeletServerError(404, `container not found ("${container}")`);
    return { pod, containerId: status.containerID.replace(/^[^:]+:\/\//, '') };
  }
}

function segments(path: string): string[] {
  try {
    return path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    throw new KubeletServerError(400, `malformed path ${path}`);
  }
}

/** The query as the log server reads it (each parameter's first value, or all of them). */
function queryRecord(q: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of new Set(q.keys())) {
    const all = q.getAll(k);
    out[k] = all.length === 1 ? all[0] : all;
  }
  return out;
}

function containerSpec(pod: Pod, name: string): { tty?: boolean } | undefined {
  const spec = pod.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? []), ...(spec?.ephemeralContainers ?? [])].find((c) => c.name === name);
}

/** A streaming route needs an upgrade request (UpgradeAwareHandler with upgradeRequired). */
function requireUpgrade(ex: Exchange): { socket: Duplex; head: Buffer } {
  if (ex.kind !== 'upgrade') throw new KubeletServerError(400, 'Upgrade request required');
  return ex;
}

/** A route answered as a plain response; an upgrade request to it is refused. */
async function plain(ex: Exchange, serve: (res: ServerResponse) => void | Promise<void>): Promise<void> {
  if (ex.kind !== 'plain') throw new KubeletServerError(400, 'this path does not upgrade');
  await serve(ex.res);
}

function reply(ex: Exchange, status: number, message: string): void {
  if (ex.kind === 'upgrade') return writeError(ex.socket, status, message);
  if (ex.res.headersSent) {
    ex.res.end();
    return;
  }
  sendText(ex.res, status, message);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end(text);
}

function sendJson(res: ServerResponse, status: number, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}
