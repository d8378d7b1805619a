/** The tcpSocket action (pkg/probe/tcp): a connection opened within the timeout, then closed. */
import type { Clock } from '@app/clock';
import type { TcpDialer } from './ports.js';
import { joinHostPort } from '@app/kube';
import { dialErrorText, failureOutcome, type ProbeOutcome } from './probe.js';

/** DoTCPProbe: Success once connected; a refused, unreachable or timed-out dial is a Failure worded as Go's net package does. */
export function doTcpProbe(dialer: TcpDialer, clock: Clock, host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const abort = new AbortController();
  return new Promise<ProbeOutcome>((resolve) => {
    let settled = false;
    const finish = (o: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      abort.abort();
      resolve(o);
    };
    const timer = clock.setTimer(timeoutMs, () => finish(failureOutcome(`dial tcp ${addr}: i/o timeout`)));
    dialer.dial(host, port, abort.signal).then(
      () => finish({ result: 'Success', output: '' }),
      (err: unknown) => finish(failureOutcome(dialErrorText(err, addr))),
    );
  });
}
