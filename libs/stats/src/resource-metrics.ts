/**
 * `/metrics/resource`: upstream's pkg/kubelet/metrics/collectors/resource_metrics.go,
 * the resource metrics endpoint metrics-server scrapes, rendered from one
 * Summary (the collector's CollectWithStability reads the same summary
 * provider). The same names, help, types and labels; each sample carries the
 * time of its figure, as the collector's NewLazyMetricWithTimestamp does.
 * A summary that cannot be read gives only resource_scrape_error 1.
 */
import type { Summary } from './summary-types.js';

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

const family = (name: string, help: string, type: Family['type']): Family => ({ name, help, type, samples: [] });

/** A Prometheus label value, escaped. */
const quote = (v: string) => `"${v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"')}"`;
const labels = (l: Record<string, string>) => {
  const parts = Object.entries(l).map(([k, v]) => `${k}=${quote(v)}`);
  return parts.length ? `{${parts.join(',')}}` : '';
};
const sample = (f: Family, l: Record<string, string>, value: number, time?: string) => {
  const ts = time ? Date.parse(time) : NaN;
  f.samples.push(`${f.name}${labels(l)} ${value}${Number.isFinite(ts) ? ` ${ts}` : ''}`);
};

/** The Prometheus text of a summary (or of a failed scrape: `undefined`). */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const nodeCpu = family('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', 'counter');
  const nodeMem = family('node_memory_working_set_bytes', 'Current working set of the node in bytes', 'gauge');
  const nodeSwap = family('node_swap_usage_bytes', 'Current swap usage of the node in bytes. Reported only on non-windows systems', 'gauge');
  const ctrCpu = family('container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', 'counter');
  const ctrMem = family('container_memory_working_set_bytes', 'Current working set of the container in bytes', 'gauge');
  const ctrStart = family('container_start_time_seconds', 'Start time of the container since unix epoch in seconds', 'gauge');
  const podCpu = family('pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', 'counter');
  const podMem = family('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', 'gauge');
  const scrapeError = family('resource_scrape_error', '1 if there was an error while getting container metrics, 0 otherwise', 'gauge');
  sample(scrapeError, {}, summary ? 0 : 1);
  if (summary) {
    const { node } = summary;
    if (node.cpu?.usageCoreNanoSeconds !== undefined) sample(nodeCpu, {}, node.cpu.usageCoreNanoSeconds / 1e9, node.cpu.time);
    if (node.memory?.workingSetBytes !== undefined) sample(nodeMem, {}, node.memory.workingSetBytes, node.memory.time);
    for (const pod of summary.pods) {
      const p = { pod: pod.podRef.name, namespace: pod.podRef.namespace };
      for (const c of pod.containers) {
        const l = { container: c.name, ...p };
        const start = Date.parse(c.startTime);
        if (Number.isFinite(start)) sample(ctrStart, l, start / 1000, c.startTime);
        if (c.cpu?.usageCoreNanoSeconds !== undefined) sample(ctrCpu, l, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time);
        if (c.memory?.workingSetBytes !== undefined) sample(ctrMem, l, c.memory.workingSetBytes, c.memory.time);
      }
      if (pod.cpu?.usageCoreNanoSeconds !== undefined) sample(podCpu, p, pod.cpu.usageCoreNanoSeconds / 1e9, pod.cpu.time);
      if (pod.memory?.workingSetBytes !== undefined) sample(podMem, p, pod.memory.workingSetBytes, pod.memory.time);
    }
  }
  return [ctrCpu, ctrMem, ctrStart, nodeCpu, nodeMem, nodeSwap, podCpu, podMem, scrapeError]
    .filter((f) => f.samples.length > 0)
    .map((f) => `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} ${f.type}\n${f.samples.join('\n')}\n`)
    .join('');
}
