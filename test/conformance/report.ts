/**
 * The conformance run's results: ginkgo's JSON report read into one result
 * per spec the focus selected, and the table by area that
 * `npm run conformance` prints (pure, unit-tested in report.spec.ts).
 */

/** A spec's outcome as the table counts it. */
export type Outcome = 'passed' | 'failed' | 'skipped';

export interface SpecResult {
  /** The outermost describe, e.g. `[sig-node] Pods`. */
  area: string;
  /** The spec's full text (the describes and the It, joined by spaces, as ginkgo's focus sees it). */
  name: string;
  outcome: Outcome;
  /** ginkgo's own state (passed, failed, skipped, panicked, timedout, interrupted, aborted, pending). */
  state: string;
  /** The failure's (or the skip's) message, first line. */
  message: string;
  /** Seconds the spec ran. */
  seconds: number;
}

interface GinkgoSpecReport {
  ContainerHierarchyTexts?: string[] | null;
  LeafNodeText?: string;
  LeafNodeType?: string;
  State?: string;
  RunTime?: number;
  Failure?: { Message?: string; Location?: { FileName?: string; LineNumber?: number } };
}

interface GinkgoSuiteReport {
  SpecReports?: GinkgoSpecReport[] | null;
}

const OUTCOME: Record<string, Outcome> = { passed: 'passed', skipped: 'skipped', pending: 'skipped' };

/**
 * The specs of a ginkgo JSON report (`--json-report`) that `focus` selects
 * and `skip` does not: a spec left out by the focus is in the report as
 * skipped, and must not count as one. Every state but passed, skipped and
 * pending (failed, panicked, timedout, interrupted, aborted) is a failure.
 */
export function readGinkgoReport(json: string, focus: RegExp, skip?: RegExp): SpecResult[] {
  let suites: GinkgoSuiteReport[];
  try {
    suites = JSON.parse(json) as GinkgoSuiteReport[];
  } catch (err) {
    throw new Error(`the ginkgo report is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(suites)) throw new Error('the ginkgo report is not a list of suite reports');
  const results: SpecResult[] = [];
  for (const suite of suites) {
    for (const spec of suite.SpecReports ?? []) {
      if (spec.LeafNodeType !== 'It') continue;
      const hierarchy = spec.ContainerHierarchyTexts ?? [];
      const name = [...hierarchy, spec.LeafNodeText ?? ''].join(' ');
      if (!focus.test(name) || (skip && skip.test(name))) continue;
      const state = spec.State ?? 'unknown';
      results.push({
        area: hierarchy[0] ?? '(top level)',
        name,
        outcome: OUTCOME[state] ?? 'failed',
        state,
        message: (spec.Failure?.Message ?? '').trim().split('\n')[0] ?? '',
        seconds: (spec.RunTime ?? 0) / 1e9,
      });
    }
  }
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

export interface AreaCount {
  area: string;
  passed: number;
  failed: number;
  skipped: number;
}

/** Counts by area, largest area first, then by name. */
export function countByArea(results: readonly SpecResult[]): AreaCount[] {
  const by = new Map<string, AreaCount>();
  for (const r of results) {
    const c = by.get(r.area) ?? { area: r.area, passed: 0, failed: 0, skipped: 0 };
    c[r.outcome]++;
    by.set(r.area, c);
  }
  const total = (c: AreaCount) => c.passed + c.failed + c.skipped;
  return [...by.values()].sort((a, b) => total(b) - total(a) || a.area.localeCompare(b.area));
}

/** The Markdown table by area (with the totals) and the list of failed specs with their first line. */
export function areaTable(results: readonly SpecResult[], agent: string): { table: string; failures: string } {
  const rows = countByArea(results);
  const sum = (k: 'passed' | 'failed' | 'skipped') => rows.reduce((n, r) => n + r[k], 0);
  const table = [
    `| area | ${agent}: passed | failed | skipped |`,
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.area} | ${r.passed} | ${r.failed} | ${r.skipped} |`),
    `| **all ${results.length}** | **${sum('passed')}** | **${sum('failed')}** | **${sum('skipped')}** |`,
  ].join('\n');
  const failed = results.filter((r) => r.outcome === 'failed');
  const failures = failed.length === 0 ? 'No spec failed.' : ['Failed:', ...failed.map((r) => `- ${r.name} (${r.state}, ${r.seconds.toFixed(0)} s): ${r.message.slice(0, 300)}`)].join('\n');
  return { table, failures };
}

/**
 * Two runs side by side (kubelet-split's and the upstream kubelet's), by
 * area: each one's passed and failed, then the specs whose outcome differs
 * (what one passes and the other does not), named.
 */
export function sideBySide(a: { agent: string; results: readonly SpecResult[] }, b: { agent: string; results: readonly SpecResult[] }): string {
  const ca = new Map(countByArea(a.results).map((c) => [c.area, c]));
  const cb = new Map(countByArea(b.results).map((c) => [c.area, c]));
  const areas = countByArea([...a.results, ...b.results]).map((c) => c.area);
  const cell = (c: AreaCount | undefined) => (c ? `${c.passed} / ${c.failed}${c.skipped ? ` (${c.skipped} skipped)` : ''}` : '—');
  const total = (rs: readonly SpecResult[]) => `**${rs.filter((r) => r.outcome === 'passed').length} / ${rs.filter((r) => r.outcome === 'failed').length}**`;
  const rows = [
    `| area | ${a.agent}: passed / failed | ${b.agent}: passed / failed |`,
    '|---|---|---|',
    ...areas.map((area) => `| ${area} | ${cell(ca.get(area))} | ${cell(cb.get(area))} |`),
    `| **all** (${a.results.length} / ${b.results.length} specs) | ${total(a.results)} | ${total(b.results)} |`,
  ];
  const outcomeA = new Map(a.results.map((r) => [r.name, r]));
  const outcomeB = new Map(b.results.map((r) => [r.name, r]));
  const names = [...new Set([...outcomeA.keys(), ...outcomeB.keys()])].sort();
  const differ = names.filter((n) => outcomeA.get(n)?.outcome !== outcomeB.get(n)?.outcome);
  const both = names.filter((n) => outcomeA.get(n)?.outcome === 'failed' && outcomeB.get(n)?.outcome === 'failed');
  const line = (n: string) => `- ${n}: ${a.agent} ${outcomeA.get(n)?.outcome ?? 'not run'}, ${b.agent} ${outcomeB.get(n)?.outcome ?? 'not run'}${outcomeA.get(n)?.outcome === 'failed' ? ` (${(outcomeA.get(n)?.message ?? '').slice(0, 200)})` : ''}`;
  return [
    rows.join('\n'),
    '',
    differ.length === 0 ? 'Every spec has the same outcome on both.' : ['Where they differ:', ...differ.map(line)].join('\n'),
    '',
    both.length === 0 ? 'No spec failed on both.' : ['Failed on both:', ...both.map((n) => `- ${n}: ${(outcomeB.get(n)?.message ?? '').slice(0, 200)}`)].join('\n'),
  ].join('\n');
}
