import type { Clock } from '@app/clock';
import type { Container, EventRecorder, LifecycleHandler, Pod } from '@app/contracts';
import type { CriRuntime } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { CriCommandRunner, HttpClient, LifecycleHandlerRunner, NodeHttpClient } from '@app/probe';
import { HookRunner } from '../ports.js';

/**
 * Lifecycle hooks through @app/probe's LifecycleHandlerRunner (upstream
 * handlerRunner): exec through the CRI's ExecSync, httpGet from this
 * process. An httpGet hook without a host goes to the pod IP (the node IP
 * for a hostNetwork pod); a preStop hook is not handed the IPs, so they are
 * read from the pod's ready sandbox, as upstream asks the runtime's pod status.
 * An HTTPS hook that succeeded over HTTP is a LifecycleHTTPFallback warning.
 */
export class CriHookRunner extends HookRunner {
  private readonly runner: LifecycleHandlerRunner;

  constructor(
    private readonly cri: CriRuntime,
    private readonly hostIP: string,
    clock: Clock,
    options: { events?: EventRecorder; http?: HttpClient } = {},
  ) {
    super();
    const { events } = options;
    this.runner = new LifecycleHandlerRunner({
      commands: new CriCommandRunner(cri),
      http: options.http ?? new NodeHttpClient(),
      clock,
      ...(events ? { onHttpFallback: (pod: Pod, message: string) => events.event(pod, 'Warning', 'LifecycleHTTPFallback', message) } : {}),
    });
  }

  run(pod: Pod, container: Container, containerId: string, handler: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined> {
    return this.runner.run({ pod, container, containerId, timeoutSeconds, podIP: () => this.podIP(pod, podIPs) }, handler);
  }

  private async podIP(pod: Pod, podIPs: string[]): Promise<string | undefined> {
    if (pod.spec.hostNetwork) return this.hostIP;
    if (podIPs[0]) return podIPs[0];
    const sandboxes = await this.cri.runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.podUid]: pod.metadata.uid ?? '' }, state: { state: 'SANDBOX_READY' } } });
    for (const sb of sandboxes.items ?? []) {
      const ip = (await this.cri.runtime('PodSandboxStatus', { podSandboxId: sb.id })).status?.network?.ip;
      if (ip) return ip;
    }
    return undefined;
  }
}
