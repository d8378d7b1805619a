#!/usr/bin/env node
// The test command (npm test): lint, type-check and build, make sure the
// real runtime is up (containerd with the project's config and images, via
// deploy/runtime.sh), run every *.spec.js under dist/ with node's test
// runner (unit, then integration, then end-to-end), stop what it started,
// and close with "N passed, N failed".
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
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

step('generated code', 'npm', ['run', '--silent', 'gen:check']);
step('lint', 'npx', ['eslint', '.']);
step('type-check and build', 'npm', ['run', '--silent', 'build']);

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
const tap = join(root, '.tmp', 'test-results.tap');
const r = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files],
  { stdio: 'inherit', env: { ...process.env, KS_RUNTIME_ADDRESS: execFileSync('bash', [runtime, 'address'], { encoding: 'utf8' }).trim() } },
);

if (startedRuntime) spawnSync('bash', [runtime, 'stop'], { stdio: 'inherit' });

const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, 'm')) ?? [])[1] ?? 0);
const passed = count('pass');
const failed = count('fail') + count('cancelled');
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(r.status === 0 && failed === 0 && passed > 0 ? 0 : 1);
