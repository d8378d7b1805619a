/**
 * The kubelet's prober.go newProberAction: whichever action a probe has, in
 * upstream's order (exec, httpGet, tcpSocket, grpc). The actions shared with
 * lifecycle hooks (httpGet, tcpSocket, exec) are in @app/probe; the handlers
 * here add what only probes do (the target's host, the exec env expansion,
 * grpc). Timeouts run on the injected Clock, so tests drive them with
 * FakeClock.step().
 */
import type { Clock } from '@app/clock';
import type { Probe } from '@app/contracts';
import type { CriRuntime } from '@app/cri';
import { CriCommandRunner, KUBE_PROBE_USER_AGENT, NetTcpDialer, NodeHttpClient, errorText, formatPod, unknownOutcome, type ProbeOutcome } from '@app/probe';
import { ExecProbeHandler } from './exec.js';
import { GrpcProbeHandler } from './grpc.js';
import { HttpGetProbeHandler } from './http-get.js';
import { ProbeHandler, type ProbeTarget } from './probe-handler.js';
import { TcpSocketProbeHandler } from './tcp-socket.js';

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
    if (!action) return unknownOutcome(`missing probe handler for ${formatPod(target.pod)}:${target.container.name}`);
    try {
      return await action.run(probe, target, timeoutMs);
    } catch (err) {
      return unknownOutcome(errorText(err));
    }
  }
}

export interface ProbeHandlerOptions {
  cri: CriRuntime;
  clock: Clock;
  /** Default `kube-probe/<major>.<minor>`. */
  userAgent?: string;
}

/** The four actions behind one handler, as the prober service runs them. */
export function newProbeHandler(o: ProbeHandlerOptions): ProbeHandler {
  const userAgent = o.userAgent ?? KUBE_PROBE_USER_AGENT;
  return new ActionProbeHandler({
    exec: new ExecProbeHandler(new CriCommandRunner(o.cri)),
    httpGet: new HttpGetProbeHandler(new NodeHttpClient(), o.clock, { userAgent }),
    tcpSocket: new TcpSocketProbeHandler(new NetTcpDialer(), o.clock),
    grpc: new GrpcProbeHandler(o.clock, { userAgent }),
  });
}

