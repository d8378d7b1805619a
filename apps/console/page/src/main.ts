/**
 * The web console of a kubelet-split node (issue 15), served by
 * status-manager at /console: the node's pods, and a pod's status, events,
 * logs and timeline (timeline.ts), kept live by the server-sent events of
 * /console/events; the node's topology as a graph (topology.ts); the
 * fleet's nodes from the hub (fleet.ts, `#/fleet`).
 * Preact with htm templates, bundled by esbuild at build time (build.mjs).
 */
import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { age, podReady, podRestarts, podStatusReason } from './pod-columns.js';
import { usePoll } from './poll.js';
import { PodTimeline } from './timeline.js';
import { FleetPage } from './fleet.js';
import { TopologyPage } from './topology.js';
import './app.css';

/** An event as status-manager keeps it (libs/contracts EventMessage): the fields shown. */
interface PodEvent {
  eventType: 'Normal' | 'Warning';
  reason: string;
  message: string;
  timestamp: string;
  source: { component: string; host: string };
  involvedObject: { namespace?: string; name: string; fieldPath?: string };
}

interface Route {
  page: 'pods' | 'pod' | 'topology' | 'fleet';
  namespace?: string;
  name?: string;
}

function routeOf(hash: string): Route {
  if (hash === '#/topology') return { page: 'topology' };
  if (hash === '#/fleet') return { page: 'fleet' };
  const m = /^#\/pods\/([^/]+)\/([^/]+)$/.exec(hash);
  return m ? { page: 'pod', namespace: decodeURIComponent(m[1] ?? ''), name: decodeURIComponent(m[2] ?? '') } : { page: 'pods' };
}

/** The live feed: the pod list, whether the feed is connected, and the events heard since the page opened. */
function useFeed(): { pods: Pod[] | undefined; live: boolean; events: PodEvent[] } {
  const [pods, setPods] = useState<Pod[] | undefined>(undefined);
  const [live, setLive] = useState(false);
  const [events, setEvents] = useState<PodEvent[]>([]);
  useEffect(() => {
    const source = new EventSource('/console/events');
    source.onopen = () => setLive(true);
    source.onerror = () => setLive(false);
    source.addEventListener('pods', (m: MessageEvent<string>) => setPods((JSON.parse(m.data) as { items: Pod[] }).items));
    source.addEventListener('event', (m: MessageEvent<string>) => setEvents((es) => [...es, JSON.parse(m.data) as PodEvent]));
    return () => source.close();
  }, []);
  return { pods, live, events };
}

/** Re-renders every second, for the ages. */
function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

function App() {
  const [route, setRoute] = useState(routeOf(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const feed = useFeed();
  const now = useNow();
  const node = feed.pods?.find((p) => p.spec?.nodeName)?.spec?.nodeName;
  return html`
    <header>
      <a href="#/">kubelet-split</a>
      <nav>
        <a href="#/" class=${route.page === 'pods' || route.page === 'pod' ? 'here' : ''}>Pods</a>
        <a href="#/topology" data-testid="nav-topology" class=${route.page === 'topology' ? 'here' : ''}>Topology</a>
        <a href="#/fleet" data-testid="nav-fleet" class=${route.page === 'fleet' ? 'here' : ''}>Fleet</a>
      </nav>
      ${node ? html`<span class="node" data-testid="node">node ${node}</span>` : null}
      <span class=${`live ${feed.live ? 'on' : 'off'}`} data-testid="live">${feed.live ? 'live' : 'reconnecting'}</span>
    </header>
    <main>
      ${route.page === 'topology'
        ? html`<${TopologyPage} />`
        : route.page === 'fleet'
        ? html`<${FleetPage} />`
        : route.page === 'pod' && route.namespace && route.name
        ? html`<${PodPage} namespace=${route.namespace} name=${route.name} pods=${feed.pods} heard=${feed.events} now=${now} />`
        : html`<${PodsPage} pods=${feed.pods} now=${now} />`}
    </main>
  `;
}

function PodsPage({ pods, now }: { pods: Pod[] | undefined; now: number }) {
  if (!pods) return html`<p class="muted">Loading the node's pods…</p>`;
  return html`
    <h1>Pods <span class="muted">(${pods.length})</span></h1>
    ${pods.length === 0
      ? html`<div class="empty">No pods on this node.</div>`
      : html`
          <table data-testid="pods">
            <thead><tr><th>Namespace</th><th>Name</th><th>Ready</th><th>Status</th><th>Restarts</th><th>Age</th></tr></thead>
            <tbody>
              ${pods.map((p) => {
                const ns = p.metadata?.namespace ?? 'default';
                const name = p.metadata?.name ?? '';
                const status = podStatusReason(p);
                return html`
                  <tr key=${p.metadata?.uid ?? name} data-pod=${`${ns}/${name}`}>
                    <td>${ns}</td>
                    <td><a href=${`#/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`}>${name}</a></td>
                    <td data-col="ready">${podReady(p)}</td>
                    <td data-col="status" class=${`phase-${p.status?.phase ?? 'Unknown'}`}>${status}</td>
                    <td data-col="restarts">${podRestarts(p)}</td>
                    <td data-col="age">${age(p, now)}</td>
                  </tr>
                `;
              })}
            </tbody>
          </table>
        `}
  `;
}

function PodPage({ namespace, name, pods, heard, now }: { namespace: string; name: string; pods: Pod[] | undefined; heard: PodEvent[]; now: number }) {
  const pod = pods?.find((p) => (p.metadata?.namespace ?? 'default') === namespace && p.metadata?.name === name);
  const events = usePodEvents(namespace, name, heard);
  if (!pods) return html`<p class="muted">Loading…</p>`;
  if (!pod) return html`<h1>${namespace}/${name}</h1><div class="empty" data-testid="gone">This pod is not on the node (any more).</div><p><a href="#/">All pods</a></p>`;
  const s = pod.status ?? {};
  return html`
    <h1 data-testid="pod-title">${namespace}/${name}</h1>
    <dl data-testid="pod-status">
      <dt>Status</dt><dd class=${`phase-${s.phase ?? 'Unknown'}`} data-col="status">${podStatusReason(pod)}</dd>
      <dt>Ready</dt><dd data-col="ready">${podReady(pod)}</dd>
      <dt>Restarts</dt><dd data-col="restarts">${podRestarts(pod)}</dd>
      <dt>Age</dt><dd>${age(pod, now)}</dd>
      <dt>UID</dt><dd>${pod.metadata?.uid ?? ''}</dd>
      <dt>Pod IP</dt><dd>${s.podIP ?? ''}</dd>
      <dt>QoS class</dt><dd>${s.qosClass ?? ''}</dd>
      <dt>Conditions</dt><dd>${(s.conditions ?? []).map((c) => html`<span class=${c.status === 'True' ? 'ok' : 'warn'}>${c.type}=${c.status} </span>`)}</dd>
    </dl>
    <h2>Containers</h2>
    <table data-testid="containers">
      <thead><tr><th>Name</th><th>Image</th><th>State</th><th>Ready</th><th>Restarts</th></tr></thead>
      <tbody>
        ${(pod.spec?.containers ?? []).map((c) => {
          const cs = s.containerStatuses?.find((x) => x.name === c.name);
          return html`<tr data-container=${c.name}><td>${c.name}</td><td>${c.image}</td><td>${stateOf(cs)}</td><td>${cs?.ready ? 'true' : 'false'}</td><td>${cs?.restartCount ?? 0}</td></tr>`;
        })}
      </tbody>
    </table>
    <h2>Timeline</h2>
    <${PodTimeline} namespace=${namespace} name=${name} version=${JSON.stringify(s)} />
    <h2>Events</h2>
    ${events.length === 0
      ? html`<div class="empty">No events.</div>`
      : html`
          <table data-testid="events">
            <thead><tr><th>Type</th><th>Reason</th><th>Age</th><th>From</th><th>Message</th></tr></thead>
            <tbody>
              ${events.map((e, i) => html`<tr key=${i} data-reason=${e.reason}><td data-col="type" class=${e.eventType === 'Warning' ? 'bad' : ''}>${e.eventType}</td><td>${e.reason}</td><td>${sinceText(e.timestamp, now)}</td><td>${e.source.component}</td><td>${e.message}</td></tr>`)}
            </tbody>
          </table>
        `}
    <h2>Logs</h2>
    ${(s.containerStatuses ?? []).filter((cs) => cs.containerID).map((cs) => html`<${ContainerLog} key=${cs.containerID} namespace=${namespace} pod=${name} container=${cs.name} />`)}
    ${(s.containerStatuses ?? []).some((cs) => cs.containerID) ? null : html`<div class="empty">No container has started yet.</div>`}
  `;
}

/** The pod's events from status-manager, and those heard on the feed since. */
function usePodEvents(namespace: string, name: string, heard: PodEvent[]): PodEvent[] {
  const [kept, setKept] = useState<{ items: PodEvent[]; heardBefore: number } | undefined>(undefined);
  useEffect(() => {
    let gone = false;
    const before = heard.length;
    void fetch(`/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/events`)
      .then((r) => (r.ok ? (r.json() as Promise<{ items: PodEvent[] }>) : { items: [] }))
      .then((b) => !gone && setKept({ items: b.items, heardBefore: before }));
    return () => void (gone = true);
    // Fetched once per pod: what is heard later is added from the feed.
  }, [namespace, name]);
  if (!kept) return [];
  const later = heard.slice(kept.heardBefore).filter((e) => (e.involvedObject.namespace ?? 'default') === namespace && e.involvedObject.name === name);
  return [...kept.items, ...later];
}

/** A container's latest log lines (GET /containerLogs), read again every two seconds while shown. */
function ContainerLog({ namespace, pod, container }: { namespace: string; pod: string; container: string }) {
  const [text, setText] = useState<string | undefined>(undefined);
  usePoll(
    2000,
    async (gone) => {
      const t = await (await fetch(`/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(pod)}/${encodeURIComponent(container)}?tailLines=200`)).text();
      if (!gone()) setText(t);
    },
    [namespace, pod, container],
  );
  return html`
    <h3 class="muted">${container}</h3>
    <pre class="logs" data-testid=${`logs-${container}`}>${text ?? 'loading…'}</pre>
  `;
}

function stateOf(cs: ContainerStatus | undefined): string {
  if (!cs?.state) return 'Waiting';
  if (cs.state.running) return 'Running';
  if (cs.state.terminated) return `Terminated (${cs.state.terminated.reason ?? `exit ${cs.state.terminated.exitCode}`})`;
  return `Waiting${cs.state.waiting?.reason ? ` (${cs.state.waiting.reason})` : ''}`;
}

function sinceText(t: string | undefined, now: number): string {
  if (!t) return '';
  const ms = now - Date.parse(t);
  return Number.isNaN(ms) ? '' : age({ metadata: { creationTimestamp: t } }, now);
}

const root = document.getElementById('app');
if (root) render(html`<${App} />`, root);
