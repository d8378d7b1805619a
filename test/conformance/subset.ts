/**
 * A CI subset of an upstream suite run as a user runs it (`npm run
 * conformance -- <args> --focus <the subset>`), for the conformance tests
 * (test/conformance.e2e.spec.ts, test/conformance-cluster.e2e.spec.ts):
 * asserts that every spec of the subset is in ginkgo's report (a renamed
 * spec would otherwise pass unseen) and passed, and returns the summary for
 * the caller's own checks. The run's directory is removed only once the
 * caller is done (`cleanUp`); kept when an assertion failed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../deploy/local/stack.js';
import { readGinkgoReport } from './report.js';

const escape = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

export async function runSubset(subset: readonly string[], args: readonly string[]): Promise<{ code: number | null; output: string; summary: string; cleanUp: () => void }> {
  const out = mkdtempSync(join(tmpdir(), 'ks-conformance-'));
  // Not anchored: ginkgo matches the focus against its own form of the text (the spec's labels appended, and not starting where ours does).
  const focus = subset.map(escape).join('|');
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'test', 'conformance', 'conformance.js'), ...args, '--focus', focus, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  const reportFile = join(out, 'report.json');
  assert.ok(existsSync(reportFile), `npm run conformance exited ${code} with no report:\n${output.slice(-6000)}`);
  const results = readGinkgoReport(readFileSync(reportFile, 'utf8'), new RegExp(focus));
  const byName = new Map(results.map((r) => [r.name, r]));
  assert.deepEqual(subset.filter((s) => !byName.has(s)), [], 'every spec of the subset ran (a renamed spec would otherwise pass unseen)');
  const summary = existsSync(join(out, 'summary.md')) ? readFileSync(join(out, 'summary.md'), 'utf8') : '(no summary)';
  const notPassed = results.filter((r) => r.outcome !== 'passed').map((r) => `${r.name}: ${r.state}: ${r.message}`);
  assert.deepEqual(notPassed, [], `failed or skipped specs (the reports and every log are kept in ${out}):\n${summary}`);
  return { code, output, summary, cleanUp: () => rmSync(out, { recursive: true, force: true }) };
}
