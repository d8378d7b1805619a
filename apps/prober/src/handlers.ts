/**
 * The probe actions (pkg/probe: exec, http, tcp, grpc, and the kubelet's
 * prober.go that picks one): each runs one probe against one container and
 * says Success, Failure or Unknown with an output.
 *
 * `Unknown` means the probe could not be run at all (a port name that is not
 * the container's, the runtime unreachable, no pod IP yet): upstream returns
 * an error there, retries it and throws the result away. A probe that ran
 * and did not pass is a `Failure` with the reason in the output, timeouts
 * included, as upstream converts transport errors into failures.
 *
 * Timeouts run on the injected Clock, so tests drive them with
 * FakeClock.step().
 */
import { existsSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, connect as netConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Clock } from '@app/clock';
import type { Container, EnvVar, Pod, Probe } from '@app/contracts';
import { CriRuntime, grpcCodeName, isDeadlineExceeded } from '@app/cri';

export type ProbeHandlerResult = 'Success' | 'Failure' | 'Unknown';

export interface ProbeOutcome {
  result: ProbeHandlerResult;
  output: string;
  /**
   * Success with a warning (probe.Warning upstream: an HTTP redirect to
   * another host was not followed); the kubelet records a ProbeWarning event.
   */
  warning?: boolean;
}

/** What a probe is run against. */
export interface ProbeTarget {
  pod: Pod;
  container: Container;
  /** The runtime's container ID, without the `containerd://` prefix. */
  containerId: string;
  /** status.podIP (the host IP for a hostNetwork pod); '' when the pod has none yet. */
  podIP: string;
  hostIP: string;
}

/** Runs one probe (upstream ProberAction.Run). Never rejects. */
export abstract class ProbeHandler {
  abstract run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome>;
}

/** maxRespBodyLength and the exec prober's maxReadLength: 10 KiB of output are kept. */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;
/** The kubelet version whose major.minor goes in `kube-probe/<major>.<minor>`. */
export const KUBE_PROBE_VERSION = '1.34';
export const KUBE_PROBE_USER_AGENT = `kube-probe/${KUBE_PROBE_VERSION}`;

const unknown = (output: string): ProbeOutcome => ({ result: 'Unknown', output });
const failure = (output: string): ProbeOutcome => ({ result: 'Failure', output });

// ---------------------------------------------------------------------------
// Choosing the action (prober.newProberAction)
// ---------------------------------------------------------------------------

export interface ProbeActionHandlers {
  exec: ProbeHandler;
  httpGet: ProbeHandler;
  tcpSocket: ProbeHandler;
  grpc: ProbeHandler;
}

/** Runs whichever action the probe has, in upstream's order: exec, httpGet, tcpSocket, grpc. */
export class ActionProbeHandler extends ProbeHandler {
  constructor(private readonly actions: ProbeActionHandlers) {
    super();
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.exec ? this.actions.exec : probe.httpGet ? this.actions.httpGet : probe.tcpSocket ? this.actions.tcpSocket : probe.grpc ? this.actions.grpc : undefined;
    if (!action) return unknown(`missing probe handler for ${formatPod(target.pod)}:${target.container.name}`);
    try {
      return await action.run(probe, target, timeoutMs);
    } catch (err) {
      return unknown(errorText(err));
    }
  }
}

export interface ProbeHandlerOptions {
  cri: CriRuntime;
  clock: Clock;
  /** Default `kube-probe/<KUBE_PROBE_VERSION>`. */
  userAgent?: string;
  /** Default: proto/grpc/health/v1/health.proto found above this module. */
  healthProtoPath?: string;
}

/** The four actions behind one handler, as the prober service runs them. */
export function newProbeHandler(o: ProbeHandlerOptions): ProbeHandler {
  const userAgent = o.userAgent ?? KUBE_PROBE_USER_AGENT;
  return new ActionProbeHandler({
    exec: new ExecProbeHandler(o.cri),
    httpGet: new HttpGetProbeHandler(o.clock, { userAgent }),
    tcpSocket: new TcpSocketProbeHandler(o.clock),
    grpc: new GrpcProbeHandler(o.clock, { userAgent, ...(o.healthProtoPath ? { protoPath: o.healthProtoPath } : {}) }),
  });
}

// ---------------------------------------------------------------------------
// exec (pkg/probe/exec, through the CRI's ExecSync as RunInContainer does)
// ---------------------------------------------------------------------------

export class ExecProbeHandler extends ProbeHandler {
  constructor(private readonly cri: CriRuntime) {
    super();
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    // Exec probes see only the container's static env, not the downward API (ExpandContainerCommandOnlyStatic).
    const cmd = expandCommandOnlyStatic(probe.exec?.command ?? [], target.container.env);
    if (cmd.length === 0) return unknown(`exec probe of ${formatPod(target.pod)}:${target.container.name} has no command`);
    try {
      const r = await this.cri.runtime('ExecSync', { containerId: target.containerId, cmd, timeout: String(Math.max(1, Math.ceil(timeoutMs / 1000))) });
      // RunInContainer hands back stdout then stderr; the prober keeps the first 10 KiB.
      const data = Buffer.concat([Buffer.from(r.stdout || '', 'base64'), Buffer.from(r.stderr || '', 'base64')]);
      const output = data.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
      return { result: r.exitCode === 0 ? 'Success' : 'Failure', output };
    } catch (err) {
      // The remote runtime turns DeadlineExceeded into exec.TimeoutError, which the exec prober reports as a failure.
      if (isDeadlineExceeded(err)) return failure(`command ${JSON.stringify(cmd.join(' '))} timed out`);
      return unknown(errorText(err));
    }
  }
}

/**
 * ExpandContainerCommandOnlyStatic: `$(VAR)` becomes the value of the
 * container's env var VAR (the literal value; '' for one set from a source),
 * `$$` is a literal `$`, and an unknown or unterminated reference stays as written.
 */
export function expandCommandOnlyStatic(command: readonly string[], env: readonly EnvVar[] | undefined): string[] {
  const values = new Map((env ?? []).map((e) => [e.name, e.value ?? '']));
  return command.map((arg) => expand(arg, values));
}

function expand(input: string, values: ReadonlyMap<string, string>): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += values.get(name) ?? `$(${name})`;
        i = close + 1;
      }
    } else {
      out += `$${next}`;
      i += 2;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// httpGet (pkg/probe/http: request.go, http.go)
// ---------------------------------------------------------------------------

export interface HttpGetProbeOptions {
  userAgent?: string;
}

/** Go's http.Client stops after 10 requests in a redirect chain. */
const MAX_REDIRECT_REQUESTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * GET on the container: scheme HTTP or HTTPS (certificates not verified),
 * host defaulting to the pod IP, port by number or by the container's port
 * name, the probe's headers (a Host header sets the request's host). 200-399
 * is a success; redirects are followed on the same host only (the kubelet's
 * followNonLocalRedirects=false), a redirect elsewhere ends the probe as a
 * success with a warning. At most 10 KiB of the body are read.
 */
export class HttpGetProbeHandler extends ProbeHandler {
  private readonly userAgent: string;

  constructor(
    private readonly clock: Clock,
    options: HttpGetProbeOptions = {},
  ) {
    super();
    this.userAgent = options.userAgent ?? KUBE_PROBE_USER_AGENT;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.httpGet;
    if (!action) return unknown('probe has no httpGet action');
    let url: URL;
    try {
      const host = action.host || probeHost(target);
      const port = resolveContainerPort(action.port, target.container);
      const path = action.path ?? '';
      const scheme = (action.scheme ?? 'HTTP').toLowerCase();
      url = new URL(`${scheme}://${joinHostPort(host, port)}${path.startsWith('/') ? path : `/${path}`}`);
    } catch (err) {
      return unknown(errorText(err));
    }
    const { headers, host } = probeHeaders(action.httpHeaders ?? [], this.userAgent);
    return this.probe(url, headers, host, timeoutMs);
  }

  private async probe(first: URL, headers: http.OutgoingHttpHeaders, customHost: string | undefined, timeoutMs: number): Promise<ProbeOutcome> {
    const abort = new AbortController();
    const timer = this.clock.setTimer(timeoutMs, () => abort.abort());
    let url = first;
    let hostHeader = customHost;
    let readingBody = false;
    try {
      for (let requests = 1; ; requests++) {
        const res = await httpGet(url, hostHeader === undefined ? headers : { ...headers, Host: hostHeader }, abort.signal);
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (REDIRECT_STATUSES.has(status) && location) {
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            res.destroy();
            return failure(`Get ${JSON.stringify(url.href)}: failed to parse Location header ${JSON.stringify(location)}`);
          }
          // RedirectChecker(false): a redirect to another host is not followed, its response is the answer.
          if (next.hostname === first.hostname) {
            res.destroy();
            if (requests >= MAX_REDIRECT_REQUESTS) return failure(`Get ${JSON.stringify(next.href)}: stopped after 10 redirects`);
            // Go keeps a custom Host header through a redirect only when the Location is relative.
            hostHeader = customHost !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(location) ? customHost : undefined;
            url = next;
            continue;
          }
        }
        readingBody = true;
        return httpOutcome(status, await readAtMost(res, MAX_PROBE_OUTPUT_BYTES, abort.signal));
      }
    } catch (err) {
      if (abort.signal.aborted) {
        const what = readingBody ? 'Client.Timeout or context cancellation while reading body' : 'Client.Timeout exceeded while awaiting headers';
        return failure(`Get ${JSON.stringify(url.href)}: context deadline exceeded (${what})`);
      }
      return failure(`Get ${JSON.stringify(url.href)}: ${dialErrorText(err, url.host)}`);
    } finally {
      timer.cancel();
    }
  }
}

/** DoHTTPProbe's verdict on the final response. */
function httpOutcome(status: number, body: string): ProbeOutcome {
  if (status >= 200 && status < 400) {
    if (status >= 300) return { result: 'Success', output: `Probe terminated redirects, Response body: ${body}`, warning: true };
    return { result: 'Success', output: body };
  }
  // Upstream keeps the body out of the message (kubernetes#99425).
  return failure(`HTTP probe failed with statuscode: ${status}`);
}

function httpGet(url: URL, headers: http.OutgoingHttpHeaders, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const options: https.RequestOptions = {
      method: 'GET',
      headers,
      signal,
      // DisableKeepAlives; no proxy (Node's http client uses none).
      agent: false,
    };
    if (secure) {
      options.rejectUnauthorized = false;
      // SNI from the URL's host as Go does, never from a Host header; none for an IP.
      options.servername = isIP(url.hostname.replace(/^\[|\]$/g, '')) ? '' : url.hostname;
    }
    const req = (secure ? https : http).request(url, options, resolve);
    req.once('error', reject);
    req.end();
  });
}

function readAtMost(res: http.IncomingMessage, limit: number, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      res.destroy();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      // Truncation is not an error: ReadAtMost's ErrLimitReached is logged and the body kept.
      if (size >= limit) finish();
    });
    res.once('end', () => finish());
    res.once('error', (err) => finish(err));
    res.once('close', () => finish(signal.aborted ? new Error('aborted') : undefined));
  });
}

/**
 * The probe's headers as Go's http.Header holds them (canonical names, a
 * repeated name sent once per value), with a User-Agent and `Accept: *\/*`
 * unless the probe set them (an empty Accept removes it). Host is not sent
 * as a header: it becomes the request's host.
 */
export function probeHeaders(list: readonly { name: string; value: string }[], userAgent: string): { headers: http.OutgoingHttpHeaders; host: string | undefined } {
  const values = new Map<string, string[]>();
  for (const h of list) {
    const name = canonicalHeaderName(h.name);
    values.set(name, [...(values.get(name) ?? []), h.value]);
  }
  if (!values.has('User-Agent')) values.set('User-Agent', [userAgent]);
  if (!values.has('Accept')) values.set('Accept', ['*/*']);
  else if ((values.get('Accept')?.[0] ?? '') === '') values.delete('Accept');
  const host = values.get('Host')?.[0];
  values.delete('Host');
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, v] of values) headers[name] = v.length === 1 ? v[0] : v;
  return { headers, host: host === '' ? undefined : host };
}

/** textproto.CanonicalMIMEHeaderKey: `x-custom-header` -> `X-Custom-Header`; names with other characters stay. */
export function canonicalHeaderName(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name
    .toLowerCase()
    .split('-')
    .map((p) => (p.length > 0 ? (p[0] ?? '').toUpperCase() + p.slice(1) : p))
    .join('-');
}

// ---------------------------------------------------------------------------
// tcpSocket (pkg/probe/tcp)
// ---------------------------------------------------------------------------

/** Opens a TCP connection to the container within the timeout, then closes it. */
export class TcpSocketProbeHandler extends ProbeHandler {
  constructor(private readonly clock: Clock) {
    super();
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.tcpSocket;
    if (!action) return unknown('probe has no tcpSocket action');
    let host: string;
    let port: number;
    try {
      host = action.host || probeHost(target);
      port = resolveContainerPort(action.port, target.container);
    } catch (err) {
      return unknown(errorText(err));
    }
    const addr = joinHostPort(host, port);
    return new Promise<ProbeOutcome>((resolve) => {
      let settled = false;
      const socket = netConnect({ host, port });
      const finish = (o: ProbeOutcome) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        socket.destroy();
        resolve(o);
      };
      const timer = this.clock.setTimer(timeoutMs, () => finish(failure(`dial tcp ${addr}: i/o timeout`)));
      socket.once('connect', () => finish({ result: 'Success', output: '' }));
      socket.once('error', (err) => finish(failure(dialErrorText(err, addr))));
    });
  }
}

// ---------------------------------------------------------------------------
// grpc (pkg/probe/grpc): grpc.health.v1.Health/Check
// ---------------------------------------------------------------------------

export interface GrpcProbeOptions {
  userAgent?: string;
  protoPath?: string;
}

interface HealthCheckResponse {
  status: string;
}
type HealthClient = grpc.Client & {
  Check(request: { service: string }, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, value?: HealthCheckResponse) => void): grpc.ClientUnaryCall;
};
type HealthClientConstructor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => HealthClient;

/** Where proto/grpc/health/v1/health.proto is: the first `proto/` directory walking up from this module. */
export function healthProtoPath(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const candidate = join(dir, 'proto', 'grpc', 'health', 'v1', 'health.proto');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`proto/grpc/health/v1/health.proto not found above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/** Loads grpc.health.v1.Health from a proto file (shared by the handler and tests' servers). */
export function loadHealthService(protoPath: string = healthProtoPath()): { client: HealthClientConstructor; service: grpc.ServiceDefinition } {
  const definition = protoLoader.loadSync(protoPath, { keepCase: false, enums: String, defaults: true, longs: String });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
  const Health = pkg.grpc.health.v1.Health;
  return { client: Health as unknown as HealthClientConstructor, service: Health.service };
}

/**
 * Connects to the pod IP and port (plaintext, as upstream: no credentials)
 * and calls Health/Check with the probe's service. SERVING is a success;
 * any other status, a connection that is not ready within the timeout or a
 * failed call is a failure, as grpc_health_probe does.
 */
export class GrpcProbeHandler extends ProbeHandler {
  private readonly userAgent: string;
  private readonly protoPath: string | undefined;
  private client?: HealthClientConstructor;

  constructor(
    private readonly clock: Clock,
    options: GrpcProbeOptions = {},
  ) {
    super();
    this.userAgent = options.userAgent ?? KUBE_PROBE_USER_AGENT;
    this.protoPath = options.protoPath;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.grpc;
    if (!action) return unknown('probe has no grpc action');
    let addr: string;
    let Health: HealthClientConstructor;
    try {
      if (!Number.isInteger(action.port) || action.port <= 0 || action.port >= 65536) throw new Error(`invalid port number: ${action.port}`);
      addr = joinHostPort(probeHost(target), action.port);
      Health = this.client ??= loadHealthService(this.protoPath).client;
    } catch (err) {
      return unknown(errorText(err));
    }
    const service = action.service ?? '';
    const within = formatSeconds(timeoutMs);
    const client = new Health(addr, grpc.credentials.createInsecure(), {
      'grpc.primary_user_agent': this.userAgent,
      'grpc.enable_retries': 0,
      'grpc.enable_channelz': 0,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
    });
    return new Promise<ProbeOutcome>((resolve) => {
      let settled = false;
      let connected = false;
      let call: grpc.ClientUnaryCall | undefined;
      const finish = (o: ProbeOutcome) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        call?.cancel();
        client.close();
        resolve(o);
      };
      const timer = this.clock.setTimer(timeoutMs, () =>
        finish(
          connected
            ? failure(`timeout: health rpc did not complete within ${within}`)
            : failure(`timeout: failed to connect service ${JSON.stringify(addr)} within ${within}: context deadline exceeded`),
        ),
      );
      // WithBlock: wait for the connection (the timer bounds it), then the call.
      client.waitForReady(Infinity, (err) => {
        if (settled) return;
        if (err) {
          finish(failure(`error: failed to connect service at ${JSON.stringify(addr)}: ${err.message}`));
          return;
        }
        connected = true;
        call = client.Check({ service }, new grpc.Metadata(), {}, (callErr, response) => {
          if (callErr) {
            finish(failure(grpcCallFailure(callErr, within)));
            return;
          }
          const status = response?.status ?? 'UNKNOWN';
          finish(status === 'SERVING' ? { result: 'Success', output: 'service healthy' } : failure(`service unhealthy (responded with ${JSON.stringify(status)})`));
        });
      });
    });
  }
}

function grpcCallFailure(err: grpc.ServiceError, within: string): string {
  switch (err.code) {
    case grpc.status.UNIMPLEMENTED:
      return `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`;
    case grpc.status.DEADLINE_EXCEEDED:
      return `timeout: health rpc did not complete within ${within}`;
    default:
      return `error: health rpc probe failed: rpc error: code = ${grpcCodeName(err.code)} desc = ${err.details}`;
  }
}

// ---------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------

/**
 * probe.ResolveContainerPort: a number, or the name of one of the
 * container's ports, or a number written as a string; 1-65535.
 */
export function resolveContainerPort(port: number | string, container: Container): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new Error(`port ${JSON.stringify(port)} is neither a port name of container ${JSON.stringify(container.name)} nor a number`);
  }
  if (Number.isInteger(n) && n > 0 && n < 65536) return n;
  throw new Error(`invalid port number: ${n}`);
}

/** The host a probe without its own host goes to: the pod IP (the host IP for a hostNetwork pod). */
function probeHost(target: ProbeTarget): string {
  const host = target.podIP || (target.pod.spec.hostNetwork ? target.hostIP : '');
  if (!host) throw new Error(`pod ${formatPod(target.pod)} has no IP to probe yet`);
  return host;
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** What Go's net package says for a failed dial or read. */
function dialErrorText(err: unknown, addr: string): string {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${addr.replace(/:\d+$/, '')}: no such host`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    default:
      return errorText(err);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** format.Pod: name_namespace(uid). */
export function formatPod(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/** A timeout as Go prints a time.Duration of whole or fractional seconds (1s, 1.5s, 500ms). */
function formatSeconds(ms: number): string {
  return ms >= 1000 || ms === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

// ---------------------------------------------------------------------------
// The fake
// ---------------------------------------------------------------------------

export interface RecordedProbe {
  probe: Probe;
  target: ProbeTarget;
  timeoutMs: number;
}

/**
 * A ProbeHandler for tests: records every run and answers from a queue of
 * outcomes (then from `otherwise`); `block()` holds the next answers until
 * released, to test probes in flight.
 */
export class FakeProbeHandler extends ProbeHandler {
  readonly runs: RecordedProbe[] = [];
  private readonly queue: ProbeOutcome[] = [];
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(public otherwise: ProbeOutcome = { result: 'Success', output: '' }) {
    super();
  }

  /** The next runs answer these, in order. */
  answer(...outcomes: (ProbeOutcome | ProbeHandlerResult)[]): this {
    for (const o of outcomes) this.queue.push(typeof o === 'string' ? { result: o, output: o === 'Failure' ? 'probe says no' : '' } : o);
    return this;
  }

  /** Answers from now on hold until `unblock()`. */
  block(): this {
    this.gate ??= new Promise<void>((resolve) => (this.release = resolve));
    return this;
  }

  unblock(): void {
    this.release?.();
    this.gate = undefined;
    this.release = undefined;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    this.runs.push({ probe, target, timeoutMs });
    const outcome = this.queue.shift() ?? this.otherwise;
    if (this.gate) await this.gate;
    return outcome;
  }
}

const _isPort: ProbeHandler = new FakeProbeHandler() satisfies ProbeHandler;
void _isPort;
