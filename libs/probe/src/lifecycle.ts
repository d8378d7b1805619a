/**
 * Lifecycle hooks (pkg/kubelet/lifecycle/handlers.go, handlerRunner.Run):
 * a postStart or preStop handler run against one container.
 *
 *   exec    -> RunInContainer (ExecSync); a non-zero exit fails the hook
 *   httpGet -> one GET with the lifecycle client: User-Agent
 *              `kube-lifecycle/<major>.<minor>`, Host header honoured, an
 *              IPv6 host in brackets, TLS not verified, redirects on the
 *              same host followed (RedirectChecker(false)). Any response is
 *              a success, whatever its status: only a transport error
 *              (refused, unreachable, timed out) fails the hook, as
 *              runHTTPHandler returns only client.Do's error. An HTTPS
 *              hook answered in plain HTTP is retried over HTTP without
 *              the Authorization header (a LifecycleHTTPFallback warning).
 *   sleep   -> waits on the Clock
 *
 * A hook whose target carries a `signal` stops when it aborts (the pod
 * worker cancels a sync to hurry a termination): the ExecSync or the GET is
 * cancelled, the sleep ends with upstream's "container terminated before
 * sleep hook finished"; the hook then fails.
 *   other   -> refused: `invalid handler: ...` (a tcpSocket hook passes
 *              API validation for compatibility but the kubelet never runs
 *              it; it fails like a handler of no kind)
 *
 * A failed hook yields upstream's message, which names the command or path
 * and may carry the hook's output. The caller puts it in the container's
 * status (PostStartHookError) but never in an event: upstream's events say
 * only "PostStartHook failed" / "PreStopHook failed" so that secrets do not
 * leak (kuberuntime_container.go startContainer, executePreStopHook).
 */
import type { Clock } from '@app/clock';
import type { Container, HTTPGetAction, LifecycleHandler, Pod, TCPSocketAction } from '@app/contracts';
import { runInContainer } from './exec.js';
import { doHttpGet, newRequestForHttpGetAction } from './http.js';
import { HTTP_RESPONSE_TO_HTTPS_CLIENT, type ContainerCommandRunner, type HttpClient } from './ports.js';
import { KUBE_LIFECYCLE_USER_AGENT, errorText, formatPod } from './probe.js';

export interface LifecycleHookTarget {
  pod: Pod;
  container: Container;
  /** The runtime's container ID, without the `containerd://` prefix. */
  containerId: string;
  /** The IP an httpGet hook without a host goes to; asked only then. Undefined when the pod has none. */
  podIP: () => Promise<string | undefined>;
  /** How long the hook may run (its ExecSync timeout, its HTTP client timeout, the most it sleeps). */
  timeoutSeconds: number;
  /** The caller's cancellation (upstream's ctx): the hook stops when it aborts, and fails. */
  signal?: AbortSignal;
}

export interface LifecycleHandlerRunnerDeps {
  commands: ContainerCommandRunner;
  http: HttpClient;
  clock: Clock;
  /** Records the LifecycleHTTPFallback warning (upstream: a pod event) after an HTTPS hook succeeded over HTTP. */
  onHttpFallback?: (pod: Pod, message: string) => void;
}

/** Runs lifecycle hooks (upstream handlerRunner). */
export class LifecycleHandlerRunner {
  constructor(private readonly deps: LifecycleHandlerRunnerDeps) {}

  /** Resolves with upstream's failure message, or undefined when the hook succeeded. Never rejects. */
  async run(target: LifecycleHookTarget, handler: LifecycleHandler): Promise<string | undefined> {
    const { pod, container } = target;
    if (handler.exec) {
      const command = handler.exec.command ?? [];
      const r = await runInContainer(this.deps.commands, target.containerId, command, Math.max(1, target.timeoutSeconds), target.signal);
      if (r.error === undefined) return undefined;
      return `Exec lifecycle hook (${goSlice(command)}) for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(formatPod(pod))} failed - error: ${r.error}, message: ${JSON.stringify(r.output.toString('utf8'))}`;
    }
    if (handler.httpGet) {
      const error = await this.runHttpHandler(target, handler.httpGet);
      if (error === undefined) return undefined;
      return `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) for Container ${JSON.stringify(container.name)} in Pod ${JSON.stringify(formatPod(pod))} failed - error: ${error}`;
    }
    if (handler.sleep) {
      try {
        await this.deps.clock.sleep(Math.min(handler.sleep.seconds, target.timeoutSeconds) * 1000, target.signal);
      } catch {
        // runSleepHandler's `case <-ctx.Done()`.
        return 'container terminated before sleep hook finished';
      }
      return undefined;
    }
    return `Cannot run handler: invalid handler: ${goLifecycleHandler(handler)}`;
  }

  /** runHTTPHandler: the error of the GET, if it had one. */
  private async runHttpHandler(target: LifecycleHookTarget, action: HTTPGetAction): Promise<string | undefined> {
    let podIP = action.host ?? '';
    if (!podIP) {
      podIP = (await target.podIP().catch(() => undefined)) ?? '';
      if (!podIP) return `failed to find networking container: pod ${formatPod(target.pod)} has no IP`;
    }
    let request;
    try {
      request = newRequestForHttpGetAction(action, target.container, podIP, KUBE_LIFECYCLE_USER_AGENT);
    } catch (err) {
      return errorText(err);
    }
    const timeoutMs = Math.max(1, target.timeoutSeconds) * 1000;
    const result = await doHttpGet(this.deps.http, this.deps.clock, request, timeoutMs, target.signal);
    if (result.ok) return undefined;
    if (request.url.protocol === 'https:' && result.error.includes(HTTP_RESPONSE_TO_HTTPS_CLIENT)) {
      // An HTTPS hook answered in plain HTTP is retried over HTTP, without credentials (isHTTPResponseError).
      const url = new URL(request.url.href.replace(/^https:/, 'http:'));
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'Authorization'));
      const retry = await doHttpGet(this.deps.http, this.deps.clock, { ...request, url, headers }, timeoutMs, target.signal);
      if (retry.ok) {
        this.deps.onHttpFallback?.(target.pod, `request to HTTPS lifecycle hook ${url.host} got HTTP response, retry with HTTP succeeded`);
        return undefined;
      }
    }
    return result.error;
  }
}

/** A []string as Go's %v prints it: `[sh -c exit 1]`. */
function goSlice(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/** A *v1.LifecycleHandler as its generated String() prints it, for the invalid-handler message. */
function goLifecycleHandler(h: LifecycleHandler): string {
  const tcp = (t: TCPSocketAction) => `&TCPSocketAction{Port:${goIntOrString(t.port)},Host:${t.host ?? ''},}`;
  return `&LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:${h.tcpSocket ? tcp(h.tcpSocket) : 'nil'},Sleep:nil,}`;
}

/** intstr.IntOrString printed with %v: `{0 8080 }` or `{1 0 http}`. */
function goIntOrString(v: number | string): string {
  return typeof v === 'number' ? `{0 ${v} }` : `{1 0 ${v}}`;
}
