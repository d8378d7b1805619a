/**
 * Runtime dependencies are runtime dependencies: the image keeps only
 * package.json's `dependencies` (the Dockerfile's `npm prune --omit=dev`), so
 * every package the production code loads must be one. Checked twice: in the
 * sources the services are built from (apps/<service>/src, libs/<lib>/src,
 * deploy/nats: what `nats-credentials` runs in the image), every import that
 * is not `import type`; and in what the image runs, the bundles
 * (deploy/bundle.mjs), every static or dynamic import esbuild left out of
 * them. @kubernetes/client-node, imported only when a node joins a cluster,
 * was a devDependency: the compose node could not join (issue 29).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../deploy/local/stack.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const runtime = new Set(Object.keys(pkg.dependencies));

/** `@scope/name/deep` -> `@scope/name`, `name/deep` -> `name`; undefined for a relative path, an alias or a builtin. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('@app/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  return builtinModules.includes(name) ? undefined : name;
}

/** The packages a TypeScript source loads at run time: `import ... from`, `export ... from`, `import(...)`; not `import type`. */
export function runtimeImports(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?\sfrom\s+'([^']+)'/gm)) if (!m[2]) out.push(m[3] ?? '');
  for (const m of source.matchAll(/^\s*import\s+'([^']+)'/gm)) out.push(m[1] ?? '');
  for (const m of source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push(m[1] ?? '');
  return out.flatMap((s) => packageOf(s) ?? []);
}

function files(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : []));
}

describe('runtime dependencies', () => {
  it('reads imports as the production code writes them (the parser itself)', () => {
    const source = [
      "import { KubeConfig } from '@kubernetes/client-node';",
      "import type { Pod } from 'kubernetes-types/core/v1.js';",
      "import { readFileSync } from 'node:fs';",
      "import { x } from '@app/contracts';",
      "export { y } from 'rxjs/operators';",
      "const { KubeConfig: K } = await import('@kubernetes/client-node');",
    ].join('\n');
    assert.deepEqual(runtimeImports(source), ['@kubernetes/client-node', 'rxjs', '@kubernetes/client-node']);
  });

  it('every package the services\' sources load is in dependencies, none only in devDependencies', () => {
    const roots = [
      ...readdirSync(join(REPO_ROOT, 'apps')).map((app) => join(REPO_ROOT, 'apps', app, 'src')),
      ...readdirSync(join(REPO_ROOT, 'libs')).map((lib) => join(REPO_ROOT, 'libs', lib, 'src')),
      join(REPO_ROOT, 'deploy', 'nats'),
    ];
    const sources = roots.flatMap((d) => files(d, (n) => n.endsWith('.ts') && !n.endsWith('.spec.ts') && !n.endsWith('.d.ts') && !n.includes('fake')));
    assert.ok(sources.length > 100, `found ${sources.length} sources`);
    const missing = sources.flatMap((f) => runtimeImports(readFileSync(f, 'utf8')).filter((p) => !runtime.has(p)).map((p) => `${relative(REPO_ROOT, f)} loads ${p}${p in pkg.devDependencies ? ' (a devDependency: npm prune --omit=dev removes it from the image)' : ''}`));
    assert.deepEqual(missing, []);
  });

  it('every package the bundles import (left out by deploy/bundle.mjs) is in dependencies', () => {
    const bundle = join(REPO_ROOT, 'dist', 'bundle');
    const outputs = files(bundle, (n) => n.endsWith('.mjs'));
    assert.ok(outputs.length > 10, `no bundles in ${bundle} (npm run build)`);
    const imported = new Set<string>();
    for (const f of outputs) {
      const text = readFileSync(f, 'utf8');
      const specifiers = [...text.matchAll(/^import\s[^;]*?from\s*"([^"]+)";/gm), ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? '');
      for (const s of specifiers) {
        const p = packageOf(s);
        if (p) imported.add(p);
      }
    }
    // Nest's and pino's optional peers (deploy/bundle.mjs): asked for only when a feature we do not use is, and installed nowhere.
    const optional = [...readFileSync(join(REPO_ROOT, 'deploy', 'bundle.mjs'), 'utf8').matchAll(/^\s+'([^']+)',$/gm)].map((m) => m[1] ?? '').filter((p) => p !== '@kubernetes/client-node' && !p.endsWith('/*'));
    for (const p of optional) assert.ok(!runtime.has(p) && !(p in pkg.devDependencies), `${p} is an optional peer in deploy/bundle.mjs, yet a dependency: bundle it`);
    assert.ok(imported.has('@kubernetes/client-node'), `the bundles import @kubernetes/client-node (a node joining a cluster): saw ${[...imported].join(', ')}`);
    assert.deepEqual([...imported].filter((p) => !runtime.has(p) && !optional.includes(p)), []);
  });
});
