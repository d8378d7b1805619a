import { ContainerLogTail } from '../ports.js';

/** ContainerLogTail over the kubelet server's read port (with the node's HTTP token when one is set). */
export class HttpContainerLogs extends ContainerLogTail {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {
    super();
  }

  async tail(namespace: string, pod: string, container: string, lines: number): Promise<{ status: number; text: string }> {
    const url = new URL(`/containerLogs/${[namespace, pod, container].map(encodeURIComponent).join('/')}`, this.baseUrl);
    url.searchParams.set('tailLines', String(lines));
    const r = await fetch(url, { headers: this.token ? { authorization: `Bearer ${this.token}` } : {}, signal: AbortSignal.timeout(10_000) });
    return { status: r.status, text: await r.text() };
  }
}
