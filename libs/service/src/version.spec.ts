import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findProjectVersion, projectVersion } from './version.js';

describe('findProjectVersion', () => {
  const files = (map: Record<string, object>) => (path: string) => (map[path] ? JSON.stringify(map[path]) : undefined);

  it('takes the version of the nearest package.json named kubelet-split, skipping other packages', () => {
    const read = files({
      '/app/node_modules/x/package.json': { name: 'x', version: '9.9.9' },
      '/app/package.json': { name: 'kubelet-split', version: '0.2.0-rc.1' },
    });
    assert.equal(findProjectVersion('/app/node_modules/x/dist', read), '0.2.0-rc.1');
    assert.equal(findProjectVersion('/app/dist/bundle', read), '0.2.0-rc.1');
  });

  it('names where it looked when there is none', () => {
    assert.throws(() => findProjectVersion('/nowhere/dist', files({ '/package.json': { name: 'other', version: '1.0.0' } })), /no package\.json named kubelet-split with a version at or above \/nowhere\/dist/);
  });
});

describe('projectVersion', () => {
  it("is the checkout's package.json version", () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../../package.json', import.meta.url)), 'utf8')) as { version: string };
    assert.equal(projectVersion(), pkg.version);
  });
});
