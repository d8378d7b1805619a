/**
 * The fleet (GET /console/fleet/nodes, read from the hub as the fleet
 * reader: apps/console/src/console-fleet.ts): one row per node, its Ready
 * condition as the node computes it (Unknown when it does not answer), its
 * pods and the services that answer; below, each node's pods. Read again
 * every three seconds.
 */
import { html } from 'htm/preact';
import { usePolledJson } from './poll.js';

interface FleetPod {
  namespace: string;
  name: string;
  phase: string;
  ready: string;
}

interface FleetNode {
  name: string;
  reachable: boolean;
  linked: boolean;
  ready: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  services: { service: string; instances: number }[];
  pods: FleetPod[];
  lastSeen: number;
}

type FleetView = { enabled: false; message: string } | { enabled: true; nodes: FleetNode[]; readAt: number; boundMs: number; error?: string };

/** The Ready column as `kubectl get nodes` STATUS says it. */
export function readyText(n: Pick<FleetNode, 'ready' | 'reachable' | 'linked'>): string {
  if (n.ready === 'True') return 'Ready';
  if (n.ready === 'False') return 'NotReady';
  if (n.reachable) return 'Unknown';
  return n.linked ? 'Unknown (not answering)' : 'Unknown (unreachable)';
}

const readyClass = (n: FleetNode) => (n.ready === 'True' ? 'ok' : n.ready === 'False' ? 'bad' : 'warn');

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s}s ago` : `${Math.round(s / 60)}m ago`;
}

export function FleetPage() {
  const { value: v, error } = usePolledJson<FleetView>('/console/fleet/nodes', 3000);
  if (!v) return html`<h1>Fleet</h1><div class="empty" data-testid="fleet-loading">${error ?? 'Asking the hub…'}</div>`;
  if (!v.enabled) return html`<h1>Fleet</h1><div class="empty" data-testid="fleet-off">${v.message}</div>`;
  const reachable = v.nodes.filter((n) => n.reachable).length;
  return html`
    <h1>Fleet <span class="muted">(${v.nodes.length} nodes, ${reachable} answering within ${v.boundMs} ms)</span></h1>
    <p class="muted">Read from the hub as the fleet reader every few seconds: the nodes linked to it, each asked for its services, its pods and its Node's conditions. Ready is the Node's Ready condition as the node's node-status computes it; a node that does not answer within ${v.boundMs} ms is Unknown, with its pods as last read.</p>
    ${v.error ?? error ? html`<p class="bad" data-testid="fleet-error">${v.error ?? error}</p>` : null}
    ${v.nodes.length === 0
      ? html`<div class="empty" data-testid="fleet-empty">No node answered on the hub.</div>`
      : html`
          <table data-testid="fleet-nodes">
            <thead><tr><th>Node</th><th>Ready</th><th>Pods</th><th>Services answering</th><th>Last answered</th></tr></thead>
            <tbody>
              ${v.nodes.map(
                (n) => html`
                  <tr key=${n.name} data-node=${n.name} data-ready=${n.ready} data-reachable=${String(n.reachable)}>
                    <td>${n.name}</td>
                    <td data-col="ready" class=${readyClass(n)} title=${n.message}>${readyText(n)}${n.reason ? html` <span class="muted">${n.reason}</span>` : null}</td>
                    <td data-col="pods">${n.pods.length}</td>
                    <td data-col="services">${n.services.length === 0 ? html`<span class="muted">none</span>` : n.services.map((s) => (s.instances > 1 ? `${s.service} ×${s.instances}` : s.service)).join(', ')}</td>
                    <td data-col="last-seen" class="muted">${n.reachable ? 'now' : n.lastSeen === 0 ? 'never' : ago(v.readAt - n.lastSeen)}</td>
                  </tr>
                `,
              )}
            </tbody>
          </table>
          ${v.nodes.map(
            (n) => html`
              <h2>${n.name} <span class="muted">${n.reachable ? '' : '(pods as last read)'}</span></h2>
              ${n.pods.length === 0
                ? html`<div class="empty" data-node-pods=${n.name}>No pods.</div>`
                : html`
                    <table data-node-pods=${n.name}>
                      <thead><tr><th>Namespace/Name</th><th>Phase</th><th>Ready</th></tr></thead>
                      <tbody>
                        ${n.pods.map(
                          (p) => html`
                            <tr key=${`${p.namespace}/${p.name}`} data-pod=${`${p.namespace}/${p.name}`}>
                              <td>${p.namespace}/${p.name}</td>
                              <td data-col="phase" class=${`phase-${p.phase}`}>${p.phase}</td>
                              <td data-col="ready">${p.ready}</td>
                            </tr>
                          `,
                        )}
                      </tbody>
                    </table>
                  `}
            `,
          )}
        `}
  `;
}
