#!/usr/bin/env node
// The test command (npm test): lint, type-check and build, make sure the
// real runtime is up (containerd with the project's config and images, via
// deploy/runtime.sh) and the test control plane built (etcd and
// kube-apiserver, deploy/control-plane/build.sh), run every *.spec.js under
// dist/ with node's test runner (unit side by side, then integration, then
// end-to-end, one file at a time), stop what it started, and close with
// "N passed, N failed".
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

function step(name, cmd, args) {
  process.stdout.write(`\n== ${name}: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    process.stdout.write(`\n== ${name} failed (exit ${r.status ?? r.signal})\n0 passed, 1 failed\n`);
    process.exit(1);
  }
}

// KS_TEST_BUILT=1: the caller has just built dist and leaves the checks to a later npm test (.ci/run's
// other-runtime lane): the tests run on that build, without the generated-code check, lint, build and Go tests
// again (about 3 minutes of a cold CI run).
if (process.env['KS_TEST_BUILT'] === '1') {
  if (!existsSync(join(root, 'dist'))) step('dist (KS_TEST_BUILT=1, but nothing is built)', 'false', []);
  process.stdout.write('\n== KS_TEST_BUILT=1: no checks or build here; the tests run on dist as it is\n');
} else {
  step('generated code', 'npm', ['run', '--silent', 'gen:check']);
  step('lint', 'npx', ['eslint', '.']);
  step('type-check and build', 'npm', ['run', '--silent', 'build']);
  // The Go PLEG's own unit tests (contrib/pleg-go, docs/adr/0035), where there is a Go to run them.
  if (spawnSync('go', ['version']).status === 0) step('pleg-go unit tests', 'bash', ['-c', 'cd contrib/pleg-go && go vet ./... && go test ./...']);
}

const runtime = join(root, 'deploy', 'runtime.sh');
const runtimeUp = () => spawnSync('bash', [runtime, 'status']).status === 0;
let startedRuntime = false;
if (!runtimeUp()) {
  step('runtime', 'bash', [runtime, 'start']);
  startedRuntime = true;
} else {
  // Already running (a launcher, or an earlier run): make sure the images are there.
  step('runtime', 'bash', [runtime, 'start']);
}

function specs(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return specs(p);
    return e.name.endsWith('.spec.js') ? [p] : [];
  });
}
const all = [...specs(join(root, 'dist', 'libs')), ...specs(join(root, 'dist', 'apps')), ...specs(join(root, 'dist', 'test'))];
const layer = (f) => (f.endsWith('.e2e.spec.js') ? 2 : f.endsWith('.int.spec.js') ? 1 : 0);
all.sort((a, b) => layer(a) - layer(b) || a.localeCompare(b));
const only = process.argv.slice(2);
const files = only.length > 0 ? all.filter((f) => only.some((o) => f.includes(o))) : all;
process.stdout.write(`\n== tests: ${files.length} files\n${files.map((f) => `   ${relative(root, f)}`).join('\n')}\n`);

mkdirSync(join(root, '.tmp'), { recursive: true });
const env = { ...process.env, KS_RUNTIME_ADDRESS: execFileSync('bash', [runtime, 'address'], { encoding: 'utf8' }).trim() };

// The control plane of the cluster tests (test/support/control-plane.ts): etcd and kube-apiserver
// built from the Go module proxy by deploy/control-plane/build.sh, cached outside the repository by
// version (minutes on a fresh machine, a check afterwards). Its last line is the binaries' directory.
if (files.some((f) => layer(f) > 0)) {
  const script = join(root, 'deploy', 'control-plane', 'build.sh');
  process.stdout.write(`\n== control plane: bash ${relative(root, script)}\n`);
  const r = spawnSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const dir = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !dir) {
    process.stdout.write(`${r.stdout}\n== control plane failed (exit ${r.status ?? r.signal})\n0 passed, 1 failed\n`);
    if (startedRuntime) spawnSync('bash', [runtime, 'stop'], { stdio: 'inherit' });
    process.exit(1);
  }
  process.stdout.write(`   ${dir}\n`);
  env.KS_CONTROL_PLANE_BIN = dir;
}

// The nats-server of the integration tests: v2.14.9 with message tracing, built by deploy/nats/build.sh
// (run by deploy/install.sh; cached, a check afterwards), or Debian's 2.9.10 where there is no Go (it says so).
if (files.some((f) => layer(f) > 0)) {
  const script = join(root, 'deploy', 'nats', 'build.sh');
  process.stdout.write(`\n== nats-server: bash ${relative(root, script)}\n`);
  const r = spawnSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const server = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status === 0 && server) {
    process.stdout.write(`   ${server}\n`);
    env.KS_NATS_SERVER = server;
  }
}

/**
 * What a TAP file says: passed and failed tests, and suites whose after
 * hook failed with every test inside them passing (a leaked pod found at
 * teardown): node's own summary counts those nowhere.
 */
function tally(text) {
  const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, 'm')) ?? [])[1] ?? 0);
  let hookFailures = 0;
  const failedBelow = []; // by indentation: a "not ok" deeper down since the "# Subtest:" at that indentation
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const subtest = /^(\s*)# Subtest: /.exec(line);
    if (subtest) failedBelow[subtest[1].length] = false;
    const notOk = /^(\s*)not ok \d+ /.exec(line);
    if (!notOk) return;
    const indent = notOk[1].length;
    for (let k = 0; k < indent; k++) if (failedBelow[k] === false) failedBelow[k] = true;
    const yaml = [];
    for (let j = i + 1; j < lines.length && /^\s/.test(lines[j] ?? '') && (lines[j] ?? '').trim() !== '...'; j++) yaml.push(lines[j]);
    const block = yaml.join('\n');
    if (/type: 'suite'/.test(block) && /failureType: 'hookFailed'/.test(block) && failedBelow[indent] !== true) hookFailures++;
  });
  return { passed: count('pass'), failed: count('fail') + count('cancelled') + hookFailures };
}

/**
 * Unit specs run side by side; integration and end-to-end specs share one
 * containerd and have time bounds, so they run one file at a time, each
 * layer in its own run. Each run writes its own TAP file; the closing line
 * adds them up.
 */
const layers = [
  { name: 'unit', concurrency: [] },
  { name: 'integration', concurrency: ['--test-concurrency=1'] },
  { name: 'end-to-end', concurrency: ['--test-concurrency=1'] },
];
let passed = 0;
let failed = 0;
let ok = true;
layers.forEach(({ name, concurrency }, l) => {
  const mine = files.filter((f) => layer(f) === l);
  if (mine.length === 0) return;
  const tap = join(root, '.tmp', `test-results.${name}.tap`);
  rmSync(tap, { force: true });
  process.stdout.write(`\n== ${name} tests: ${mine.length} files${concurrency.length > 0 ? ', one at a time' : ''}\n`);
  const r = spawnSync(
    process.execPath,
    ['--enable-source-maps', '--test', ...concurrency, '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...mine],
    { stdio: 'inherit', env },
  );
  const t = tally(existsSync(tap) ? readFileSync(tap, 'utf8') : '');
  // A run that failed without a failing test in its report (it crashed, or was killed) counts as one failure.
  if (r.status !== 0 && t.failed === 0) t.failed = 1;
  passed += t.passed;
  failed += t.failed;
  ok &&= r.status === 0;
});

if (startedRuntime) spawnSync('bash', [runtime, 'stop'], { stdio: 'inherit' });

process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
