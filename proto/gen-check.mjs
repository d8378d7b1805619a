#!/usr/bin/env node
// npm run gen:check: regenerates the code the buf templates make from proto/
// into a temporary directory and fails, naming the files, when what is
// committed differs (run `npm run gen` and commit the result). Offline: buf
// runs the local ts-proto plugin.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The templates `npm run gen` runs, and the directories they generate (their plugins' `out`).
const TEMPLATES = ['buf.gen.yaml', 'buf.gen.health.yaml'];
const GENERATED = ['libs/cri/src/generated', 'apps/prober/src/generated'];

const files = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
    : [];

const tmp = mkdtempSync(join(tmpdir(), 'gen-check-'));
try {
  for (const template of TEMPLATES) {
    const r = spawnSync(join(root, 'node_modules', '.bin', 'buf'), ['generate', '--template', template, '-o', tmp], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      process.stderr.write(`gen:check: buf generate --template ${template} failed (exit ${r.status ?? r.signal})\n`);
      process.exit(1);
    }
  }
  const stale = [];
  for (const dir of GENERATED) {
    const fresh = new Set(files(join(tmp, dir)).map((f) => relative(tmp, f)));
    const committed = new Set(files(join(root, dir)).map((f) => relative(root, f)));
    for (const f of fresh) {
      if (!committed.has(f)) stale.push(`${f} (missing)`);
      else if (!readFileSync(join(tmp, f)).equals(readFileSync(join(root, f)))) stale.push(`${f} (differs from what proto/ generates)`);
    }
    for (const f of committed) if (!fresh.has(f)) stale.push(`${f} (not generated any more)`);
  }
  if (stale.length > 0) {
    process.stderr.write(`gen:check: generated code is stale:\n${stale.map((s) => `  ${s}`).join('\n')}\nRun \`npm run gen\` and commit the result.\n`);
    process.exit(1);
  }
  process.stdout.write(`gen:check: ${GENERATED.join(', ')} up to date with proto/\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
