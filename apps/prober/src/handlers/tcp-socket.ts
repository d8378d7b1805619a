/** The tcpSocket probe (pkg/probe/tcp): a connection to the container within the timeout. */
import type { Clock } from '@app/clock';
import type { Probe } from '@app/contracts';
import { TcpDialer, doTcpProbe, errorText, resolveContainerPort, unknownOutcome, type ProbeOutcome } from '@app/probe';
import { ProbeHandler, probeHost, type ProbeTarget } from './probe-handler.js';

/** Opens a TCP connection to the container within the timeout, then closes it. */
export class TcpSocketProbeHandler extends ProbeHandler {
  constructor(
    private readonly dialer: TcpDialer,
    private readonly clock: Clock,
  ) {
    super();
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.tcpSocket;
    if (!action) return unknownOutcome('probe has no tcpSocket action');
    let host: string;
    let port: number;
    try {
      host = action.host || probeHost(target);
      port = resolveContainerPort(action.port, target.container);
    } catch (err) {
      return unknownOutcome(errorText(err));
    }
    return doTcpProbe(this.dialer, this.clock, host, port, timeoutMs);
  }
}
