/** The upstream kubelet under benchmark (deploy/kubelet/run.sh). */
import type { Agent } from './agent.js';

export class UpstreamKubeletAgent {
  static create(_log: (line: string) => void): Promise<Agent> {
    return Promise.reject(new Error('the upstream kubelet is not wired into the harness yet'));
  }
}
