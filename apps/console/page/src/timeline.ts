/**
 * A pod's timeline as a waterfall (GET /console/pods/<ns>/<name>/trace, the
 * same as `kubelet-split trace`): one row per hop in causal order, its
 * offset and duration drawn to scale against the whole, the instance that
 * did it, the subject or CRI method, the slowest marked. Read again every
 * two seconds, and when the pod's status changes.
 */
import { html } from 'htm/preact';
import { usePolledJson } from './poll.js';

/** A hop as @app/nats buildTimeline gives it (the fields drawn). */
interface Hop {
  spanId: string;
  kind: string;
  instance: string;
  subject?: string;
  key?: string;
  method?: string;
  error?: string;
  offsetMs: number;
  durationMs: number;
  what: string;
}

interface Timeline {
  podUid: string;
  traceIds: string[];
  totalMs: number;
  slowestSpanId?: string;
  hops: Hop[];
}

export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)}ms`;
  if (ms < 1000) return `${ms.toFixed(1)}ms`;
  return `${(ms / 1000).toFixed(2)}s`;
}

/** The waterfall's width in SVG units (the SVG stretches to its cell). */
const W = 1000;

/** `version`: changes whenever the pod's status does, to read the timeline again at once. */
export function PodTimeline({ namespace, name, version }: { namespace: string; name: string; version: string }) {
  const { value: t, error } = usePolledJson<Timeline>(`/console/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/trace`, 2000, [version]);
  if (!t) return html`<div class="empty" data-testid="timeline-loading">${error ?? 'Reading the trace…'}</div>`;
  if (t.hops.length === 0) return html`<div class="empty" data-testid="timeline-empty">No trace records for this pod (TRACING=off, or older than TRACE_MAX_AGE).</div>`;
  const total = Math.max(t.totalMs, 0.001);
  const slowest = t.hops.find((h) => h.spanId === t.slowestSpanId);
  return html`
    <p class="muted" data-testid="timeline-summary">
      ${t.hops.length} hops in ${t.traceIds.length} trace${t.traceIds.length === 1 ? '' : 's'}, total ${formatMs(t.totalMs)}${slowest ? html`; slowest: <b>${slowest.what}</b> by ${slowest.instance}, ${formatMs(slowest.durationMs)}` : null}
      ${error ? html` <span class="bad">(${error})</span>` : null}
    </p>
    <table class="timeline" data-testid="timeline">
      <thead><tr><th>#</th><th>Offset</th><th>Duration</th><th>Instance</th><th>Hop</th><th>Subject</th><th class="bars">0 – ${formatMs(t.totalMs)}</th></tr></thead>
      <tbody>
        ${t.hops.map((h, i) => {
          const isSlowest = h.spanId === t.slowestSpanId;
          const x = (h.offsetMs / total) * W;
          const w = Math.max((h.durationMs / total) * W, 2);
          return html`
            <tr key=${h.spanId} data-hop=${i} data-kind=${h.kind} data-instance=${h.instance} data-what=${h.what} class=${`${isSlowest ? 'slowest' : ''} ${h.error ? 'failed' : ''}`}>
              <td class="muted">${i + 1}</td>
              <td data-col="offset">+${formatMs(h.offsetMs)}</td>
              <td data-col="duration">${formatMs(h.durationMs)}</td>
              <td data-col="instance">${h.instance}</td>
              <td data-col="what" title=${h.what}>${h.what}${isSlowest ? html` <span class="badge" data-testid="slowest">slowest</span>` : null}</td>
              <td data-col="subject" class="subject" title=${h.subject ?? h.key ?? ''}>${h.subject ?? h.key ?? ''}</td>
              <td class="bars">
                <svg viewBox=${`0 0 ${W} 12`} preserveAspectRatio="none" role="img" aria-label=${`${h.what}: +${formatMs(h.offsetMs)}, ${formatMs(h.durationMs)}`}>
                  <rect class="track" x="0" y="0" width=${W} height="12" />
                  <rect class=${`bar kind-${h.kind.replace('.', '-')}${isSlowest ? ' slowest' : ''}`} x=${Math.min(x, W - w)} y="1" width=${w} height="10" />
                </svg>
              </td>
            </tr>
          `;
        })}
      </tbody>
    </table>
  `;
}
