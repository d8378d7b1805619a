/**
 * StreamingRuntime over the CRI (cri-gateway, over NATS): kuberuntime's
 * GetExec / GetAttach / GetPortForward (kuberuntime_container.go,
 * kuberuntime_manager.go getSandboxIDByPodUID) and RunInContainer
 * (ExecSync, combined stdout then stderr, an error on a non-zero exit as
 * cri-client's ExecSync gives).
 */
import type { CriRuntime } from '@app/cri/client';
import { KubeletLabels } from '@app/kube';
import { KubeletServerError, StreamingRuntime, type StreamOptions } from '../ports.js';

export class CriStreamingRuntime extends StreamingRuntime {
  constructor(private readonly cri: CriRuntime) {
    super();
  }

  async getExec(containerId: string, cmd: string[], o: StreamOptions): Promise<URL> {
    const r = await this.cri.runtime('Exec', { containerId, cmd, tty: o.tty, stdin: o.stdin, stdout: o.stdout, stderr: o.stderr });
    return streamingUrl(r.url);
  }

  async getAttach(containerId: string, o: StreamOptions): Promise<URL> {
    const r = await this.cri.runtime('Attach', { containerId, tty: o.tty, stdin: o.stdin, stdout: o.stdout, stderr: o.stderr });
    return streamingUrl(r.url);
  }

  async getPortForward(podUid: string, ports: number[]): Promise<URL> {
    const { items } = await this.cri.runtime('ListPodSandbox', { filter: { labelSelector: { [KubeletLabels.podUid]: podUid } } });
    const newest = items.sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)))[0];
    if (!newest) throw new KubeletServerError(404, `no sandbox of pod ${podUid} in the runtime`);
    const r = await this.cri.runtime('PortForward', { podSandboxId: newest.id, port: ports });
    return streamingUrl(r.url);
  }

  async runInContainer(containerId: string, cmd: string[]): Promise<Buffer> {
    const r = await this.cri.runtime('ExecSync', { containerId, cmd, timeout: '0' });
    const stdout = Buffer.from(r.stdout || '', 'base64');
    const stderr = Buffer.from(r.stderr || '', 'base64');
    if (r.exitCode !== 0) throw new Error(`command '${cmd.join(' ')}' exited with ${r.exitCode}: ${stderr.toString()}`);
    return Buffer.concat([stdout, stderr]);
  }
}

/** The runtime's answer: an absolute URL of its streaming server (containerd's on 127.0.0.1 by default). */
function streamingUrl(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new Error(`the runtime answered a streaming URL that is not absolute: "${raw}"`);
  }
}
