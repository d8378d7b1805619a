/** The httpGet probe (pkg/probe/http) with the prober's User-Agent, `kube-probe/<major>.<minor>`. */
import type { Clock } from '@app/clock';
import type { Probe } from '@app/contracts';
import { HttpClient, KUBE_PROBE_USER_AGENT, doHttpGet, errorText, httpProbeOutcome, newRequestForHttpGetAction, unknownOutcome, type HttpRequest, type ProbeOutcome } from '@app/probe';
import { ProbeHandler, probeHost, type ProbeTarget } from './probe-handler.js';

export interface HttpGetProbeOptions {
  userAgent?: string;
}

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
    private readonly http: HttpClient,
    private readonly clock: Clock,
    options: HttpGetProbeOptions = {},
  ) {
    super();
    this.userAgent = options.userAgent ?? KUBE_PROBE_USER_AGENT;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.httpGet;
    if (!action) return unknownOutcome('probe has no httpGet action');
    let request: HttpRequest;
    try {
      request = newRequestForHttpGetAction(action, target.container, action.host ? '' : probeHost(target), this.userAgent);
    } catch (err) {
      return unknownOutcome(errorText(err));
    }
    return httpProbeOutcome(await doHttpGet(this.http, this.clock, request, timeoutMs));
  }
}
