/**
 * The node's topology as a graph (GET /console/topology, the same as
 * `kubelet-split topology`): each service instance a box, each
 * (publisher, subscriber) pair an arrow labelled with the subject families
 * it carries and the messages the subscriber got. A layered layout, left to
 * right, by where each service stands on a pod's way (FLOW): generic
 * layerings (longest path, breadth-first) were tried and either stacked
 * the seven in one row or four in one column, both unreadable. Read again
 * every three seconds.
 */
import { html } from 'htm/preact';
import { usePolledJson } from './poll.js';

interface Instance {
  service: string;
  node: string;
  instance: string;
  name: string;
  inMsgs: number;
  outMsgs: number;
  inRate: number;
  outRate: number;
  subscribes: { subject: string; family: string; msgs: number }[];
}

interface Edge {
  from: string;
  to: string;
  family: string;
  msgs: number;
}

interface TopologyGraph {
  node: string;
  instances: Instance[];
  edges: Edge[];
  undocumented: { instance: string; subject: string }[];
  intervalSeconds: number;
  totals: { subscriptions?: number; streams?: number; consumers?: number; messages?: number; bytes?: number };
}

/** An arrow: one per (publisher, subscriber), its families together. */
interface Arrow {
  from: string;
  to: string;
  families: string[];
  msgs: number;
}

const label = (i: Pick<Instance, 'service' | 'instance'>) => `${i.service}#${i.instance}`;

export function arrowsOf(edges: readonly Edge[]): Arrow[] {
  const by = new Map<string, Arrow>();
  for (const e of edges) {
    const k = `${e.from}|${e.to}`;
    const a = by.get(k) ?? { from: e.from, to: e.to, families: [], msgs: 0 };
    a.families.push(e.family);
    a.msgs += e.msgs;
    by.set(k, a);
  }
  return [...by.values()];
}

/**
 * Where each service stands on a pod's way (DESIGN.md's flow): config ->
 * sync-loop -> pod-worker and prober -> cri-gateway and status-manager ->
 * pleg, whose events go back to sync-loop. A service not listed goes after
 * them.
 */
const FLOW: readonly (readonly string[])[] = [['config-source'], ['sync-loop'], ['pod-worker', 'prober'], ['cri-gateway', 'status-manager'], ['pleg']];

/** The columns of the layout, left to right, each top to bottom: the instances by FLOW. */
export function layers(instances: readonly Pick<Instance, 'service' | 'instance'>[]): string[][] {
  const columns: string[][] = FLOW.map(() => []);
  const rest: string[] = [];
  for (const service of FLOW.flat()) for (const i of instances) if (i.service === service) columns[FLOW.findIndex((c) => c.includes(service))]?.push(label(i));
  for (const i of instances) if (!FLOW.flat().includes(i.service)) rest.push(label(i));
  return [...columns, rest].filter((c) => c.length > 0);
}

const BOX = { w: 170, h: 54 };
const GAP = { x: 150, y: 90 };

const rate = (r: number) => (r >= 10 ? r.toFixed(0) : r.toFixed(1));


export function TopologyPage() {
  const { value: g, error } = usePolledJson<TopologyGraph>('/console/topology', 3000);
  if (!g) return html`<h1>Topology</h1><div class="empty" data-testid="topology-loading">${error ?? 'Reading NATS monitoring…'}</div>`;
  const ids = g.instances.map(label);
  const arrows = arrowsOf(g.edges);
  const columns = layers(g.instances);
  const tallest = Math.max(1, ...columns.map((c) => c?.length ?? 0));
  const height = tallest * BOX.h + (tallest - 1) * GAP.y + 60;
  const width = columns.length * BOX.w + (columns.length - 1) * GAP.x + 40;
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((col, c) => {
    const span = col.length * BOX.h + (col.length - 1) * GAP.y;
    col.forEach((id, r) => pos.set(id, { x: 20 + c * (BOX.w + GAP.x), y: (height - span) / 2 + r * (BOX.h + GAP.y) }));
  });
  const byId = new Map(g.instances.map((i) => [label(i), i]));
  const twoWay = new Set(arrows.map((a) => `${a.from}|${a.to}`));
  return html`
    <h1>Topology <span class="muted">(node ${g.node}: ${g.instances.length} instances, ${arrows.length} links)</span></h1>
    ${error ? html`<p class="bad">${error}</p>` : null}
    <div class="graph">
      <svg data-testid="topology" viewBox=${`0 0 ${width} ${height}`} width="100%" role="img" aria-label="services and the subjects between them">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead" /></marker>
        </defs>
        ${arrows.map((a) => {
          const p = pos.get(a.from);
          const q = pos.get(a.to);
          if (!p || !q) return null;
          // Leave from the side facing the target; a pair both ways bends apart.
          const forward = q.x > p.x || (q.x === p.x && q.y > p.y);
          const x1 = p.x + (q.x > p.x ? BOX.w : q.x < p.x ? 0 : BOX.w / 2);
          const y1 = p.y + BOX.h / 2;
          const x2 = q.x + (q.x > p.x ? 0 : q.x < p.x ? BOX.w : BOX.w / 2);
          const y2 = q.y + BOX.h / 2;
          const bend = (twoWay.has(`${a.to}|${a.from}`) ? 26 : 10) * (forward ? -1 : 1);
          const mx = (x1 + x2) / 2 + (q.x === p.x ? bend * 3 : 0);
          const my = (y1 + y2) / 2 + bend;
          return html`
            <g class="edge" data-from=${a.from} data-to=${a.to} data-families=${a.families.join(' ')}>
              <path d=${`M${x1},${y1} Q${mx},${my} ${x2},${y2}`} marker-end="url(#arrow)" />
              <text x=${(x1 + 2 * mx + x2) / 4} y=${(y1 + 2 * my + y2) / 4 - 3} text-anchor="middle">${a.families.join(', ')} (${a.msgs})</text>
            </g>
          `;
        })}
        ${ids.map((id) => {
          const p = pos.get(id);
          const i = byId.get(id);
          if (!p || !i) return null;
          return html`
            <g class="service" data-service=${i.service} data-instance=${i.name} transform=${`translate(${p.x},${p.y})`}>
              <rect width=${BOX.w} height=${BOX.h} rx="6" />
              <text x=${BOX.w / 2} y="21" text-anchor="middle" class="name">${id}</text>
              <text x=${BOX.w / 2} y="40" text-anchor="middle" class="counts">in ${i.inMsgs} (${rate(i.inRate)}/s) · out ${i.outMsgs} (${rate(i.outRate)}/s)</text>
            </g>
          `;
        })}
      </svg>
    </div>
    <p class="muted">An arrow runs from a publisher to the instances subscribed to that subject family (what an instance publishes is the design's table, libs/nats NATS_ACCESS: NATS monitoring counts no publishes per subject); its number is the messages the subscriber got. ${g.intervalSeconds > 0 ? `Rates over the last ${g.intervalSeconds.toFixed(1)}s.` : 'Rates from the next refresh on.'}</p>
    ${g.undocumented.length > 0
      ? html`<p class="bad" data-testid="undocumented">${g.undocumented.map((u) => html`UNDOCUMENTED: ${u.instance} subscribes to ${u.subject}<br />`)}</p>`
      : null}
    <h2>Subscriptions</h2>
    <table data-testid="subscriptions">
      <thead><tr><th>Instance</th><th>Family</th><th>Subject</th><th>Messages</th></tr></thead>
      <tbody>
        ${g.instances.flatMap((i) =>
          i.subscribes.filter((s) => s.family !== 'inbox').map((s) => html`<tr key=${`${i.name}|${s.subject}`} data-instance=${i.name}><td>${label(i)}</td><td>${s.family}</td><td class="subject">${s.subject}</td><td>${s.msgs}</td></tr>`),
        )}
      </tbody>
    </table>
  `;
}
