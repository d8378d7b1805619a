import { createConnection } from 'node:net';
import type { Container, LifecycleHandler, Pod } from '@app/contracts';
import type { CriRuntime } from '@app/cri';
import { HookRunner } from '../ports.js';

/** Lifecycle hooks: exec through the CRI (ExecSync), httpGet and tcpSocket from this process, sleep. */
export class CriHookRunner extends HookRunner {
  constructor(
    private readonly cri: CriRuntime,
    private readonly hostIP: string,
  ) {
    super();
  }
  async run(pod: Pod, c: Container, containerId: string, h: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined> {
    try {
      if (h.exec?.command?.length) {
        const r = await this.cri.runtime('ExecSync', { containerId, cmd: h.exec.command, timeout: Math.max(1, timeoutSeconds) });
        if (r.exitCode !== 0) return `command '${h.exec.command.join(' ')}' exited with ${r.exitCode}: ${Buffer.from(r.stderr || r.stdout, 'base64').toString().trim()}`;
        return undefined;
      }
      const host = h.httpGet?.host ?? h.tcpSocket?.host ?? (pod.spec.hostNetwork ? this.hostIP : (podIPs[0] ?? this.hostIP));
      if (h.httpGet) {
        const port = resolvePort(h.httpGet.port, c);
        const url = `${(h.httpGet.scheme ?? 'HTTP').toLowerCase()}://${host}:${port}${h.httpGet.path ?? '/'}`;
        const res = await fetch(url, { headers: Object.fromEntries((h.httpGet.httpHeaders ?? []).map((x) => [x.name, x.value])), signal: AbortSignal.timeout(Math.max(1, timeoutSeconds) * 1000) });
        await res.arrayBuffer();
        return res.status >= 200 && res.status < 400 ? undefined : `HTTP GET ${url} returned ${res.status}`;
      }
      if (h.tcpSocket) {
        const port = resolvePort(h.tcpSocket.port, c);
        await new Promise<void>((resolve, reject) => {
          const s = createConnection({ host, port, timeout: timeoutSeconds * 1000 }, () => {
            s.end();
            resolve();
          });
          s.on('error', reject);
          s.on('timeout', () => reject(new Error('timeout')));
        });
        return undefined;
      }
      if (h.sleep) {
        await new Promise((r) => setTimeout(r, Math.min(h.sleep?.seconds ?? 0, timeoutSeconds) * 1000));
        return undefined;
      }
      return 'the hook has no handler';
    } catch (err) {
      return (err as Error).message;
    }
  }
}

function resolvePort(port: number | string, c: Container): number {
  if (typeof port === 'number') return port;
  const named = c.ports?.find((p) => p.name === port)?.containerPort;
  if (named !== undefined) return named;
  const n = Number(port);
  if (Number.isInteger(n)) return n;
  throw new Error(`port "${port}" is not a port of container ${c.name}`);
}
