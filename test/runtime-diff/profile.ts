/**
 * A runtime's CRI profile, and two profiles compared: pure functions, so the
 * comparison is tested without a runtime (profile.spec.ts).
 *
 * A profile is, per probe (one CRI call in a fixed scenario, runtime-diff.ts),
 * either the error code the runtime answered, or the response's shape: every
 * field path with whether the runtime set it (a non-empty string, a non-zero
 * number, a true, a non-empty list or map) and, for the few fields where the
 * value itself is the difference that matters (a pinned flag, a reason, an
 * exit code, a cgroup driver), that value.
 */

/** One probe's outcome. */
export type ProbeResult = { ok: true; fields: Record<string, string> } | { ok: false; code: string; message: string };

export interface RuntimeProfile {
  kind: string;
  version: string;
  probes: Record<string, ProbeResult>;
}

/** Field paths whose values are compared, not only whether they are set (a path matches when it ends with one of these). */
const VALUE_FIELDS = ['pinned', 'reason', 'exitCode', 'cgroupDriver', 'state', 'type', 'status', 'runtimeApiVersion', 'containerEventType'];

/** What a field is: `set`, `unset`, or for a value field its value. */
function describe(path: string, v: unknown): string {
  const leaf = path.split('.').pop()?.replace(/\[\]$/, '') ?? '';
  if (VALUE_FIELDS.includes(leaf) && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) return `= ${JSON.stringify(v)}`;
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return 'unset';
  if (typeof v === 'bigint') return v === 0n ? 'unset' : 'set';
  return 'set';
}

/**
 * The response's fields as path -> set/unset/value. Lists show their first
 * element (`items[].id`); maps whose keys are the runtime's own (`info`,
 * `labels`, `annotations`) show their keys (`info{}` -> `config, pid, ...`),
 * and `info` entries that are JSON show that JSON's top-level keys.
 */
export function shape(value: unknown, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      if (v.length === 0) out[path] = 'unset';
      else walk(v[0], `${path}[]`);
      return;
    }
    if (v instanceof Uint8Array || Buffer.isBuffer(v)) {
      out[path] = v.length === 0 ? 'unset' : 'set';
      return;
    }
    if (v !== null && typeof v === 'object') {
      const leaf = path.split('.').pop() ?? '';
      if (['info', 'labels', 'annotations', 'extra'].includes(leaf)) {
        const keys = Object.keys(v).sort();
        out[`${path}{}`] = keys.length === 0 ? 'unset' : keys.join(', ');
        for (const k of keys) {
          const raw = (v as Record<string, unknown>)[k];
          if (typeof raw !== 'string' || !raw.startsWith('{')) continue;
          try {
            out[`${path}{${k}}`] = Object.keys(JSON.parse(raw) as object).sort().join(', ');
          } catch {
            // not JSON: its key is listed above
          }
        }
        return;
      }
      const entries = Object.entries(v);
      if (entries.length === 0) out[path] = 'unset';
      for (const [k, x] of entries) walk(x, path ? `${path}.${k}` : k);
      return;
    }
    out[path] = describe(path, v);
  };
  walk(value, prefix);
  return out;
}

export interface ProfileDifference {
  probe: string;
  /** The field path, or `` for the outcome (an error code against a response). */
  field: string;
  a: string;
  b: string;
}

const outcome = (r: ProbeResult | undefined): string => (r === undefined ? 'not probed' : r.ok ? 'answered' : `error ${r.code}`);

/** Every probe and field where the two profiles differ, in probe order of `a` then the probes only `b` has. */
export function compareProfiles(a: RuntimeProfile, b: RuntimeProfile): ProfileDifference[] {
  const diffs: ProfileDifference[] = [];
  const probes = [...new Set([...Object.keys(a.probes), ...Object.keys(b.probes)])];
  for (const probe of probes) {
    const x = a.probes[probe];
    const y = b.probes[probe];
    if (x?.ok !== true || y?.ok !== true) {
      if (outcome(x) !== outcome(y)) diffs.push({ probe, field: '', a: outcome(x), b: outcome(y) });
      continue;
    }
    const fields = [...new Set([...Object.keys(x.fields), ...Object.keys(y.fields)])].sort();
    for (const field of fields) {
      const fx = x.fields[field] ?? 'absent';
      const fy = y.fields[field] ?? 'absent';
      if (fx !== fy) diffs.push({ probe, field, a: fx, b: fy });
    }
  }
  return diffs;
}

/** The differences as a markdown table, one row each, the runtimes as columns. */
export function differenceTable(a: RuntimeProfile, b: RuntimeProfile): string {
  const diffs = compareProfiles(a, b);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const head = `| probe | field | ${a.kind} ${a.version} | ${b.kind} ${b.version} |\n|---|---|---|---|`;
  if (diffs.length === 0) return `${head}\n| (none) | | | |\n`;
  return `${head}\n${diffs.map((d) => `| ${d.probe} | ${d.field ? `\`${esc(d.field)}\`` : 'outcome'} | ${esc(d.a)} | ${esc(d.b)} |`).join('\n')}\n`;
}
