/**
 * `kubectl logs`: which container (k8s.io/kubectl pkg/polymorphichelpers
 * logsforobject.go) and the PodLogOptions as the log server's query
 * (pkg/cmd/logs/logs.go ToLogOptions). Pure: the CLI fetches and streams.
 */
import type { Pod } from '@app/contracts';

export interface LogsFlags {
  container?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** --tail; -1 (the default) for every line. */
  tail: number;
  /** --since, a Go duration (5s, 2m, 1h30m). */
  since?: string;
  /** --since-time, RFC3339. */
  sinceTime?: string;
  limitBytes?: number;
}

/**
 * The container to read: -c, else the pod's only container; with several,
 * kubectl's error naming the choices. A name not in the spec is refused as
 * the apiserver's pod log validation does.
 */
export function chooseContainer(pod: Pod, container: string | undefined): string {
  const name = pod.metadata.name ?? '';
  const containers = pod.spec.containers.map((c) => c.name);
  const inits = (pod.spec.initContainers ?? []).map((c) => c.name);
  const ephemeral = ((pod.spec as { ephemeralContainers?: { name: string }[] }).ephemeralContainers ?? []).map((c) => c.name);
  if (container !== undefined) {
    if (![...containers, ...inits, ...ephemeral].includes(container)) throw new Error(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  if (containers.length === 1 && containers[0] !== undefined) return containers[0];
  const choices = `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`;
  throw new Error(inits.length > 0 ? `${choices} or one of the init containers: [${inits.join(' ')}]` : choices);
}

/** A Go duration (time.ParseDuration's units from ns to h), in seconds. */
export function parseGoDuration(s: string): number {
  const units: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1);
    matched = re.lastIndex;
  }
  if (s === '' || matched !== s.length) throw new Error(`invalid argument "${s}" for "--since" flag: time: invalid duration "${s}"`);
  return total;
}

/** The log server's query string for the flags (kubectl: --since rounds up to whole seconds). */
export function logsQuery(flags: LogsFlags): string {
  if (flags.since !== undefined && flags.sinceTime !== undefined) throw new Error('at most one of `sinceTime` or `sinceSeconds` may be specified');
  const q = new URLSearchParams();
  if (flags.follow) q.set('follow', 'true');
  if (flags.previous) q.set('previous', 'true');
  if (flags.timestamps) q.set('timestamps', 'true');
  if (flags.tail >= 0) q.set('tailLines', String(flags.tail));
  else if (flags.tail !== -1) throw new Error('--tail must be -1 (all lines) or a count of lines');
  if (flags.since !== undefined) q.set('sinceSeconds', String(Math.max(1, Math.ceil(parseGoDuration(flags.since)))));
  if (flags.sinceTime !== undefined) q.set('sinceTime', flags.sinceTime);
  if (flags.limitBytes !== undefined) q.set('limitBytes', String(flags.limitBytes));
  const s = q.toString();
  return s ? `?${s}` : '';
}
