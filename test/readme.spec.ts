/** The README's configuration table names every variable that some service reads, and no other. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvSchema } from '@app/config';
import { serviceSchema, type ServiceDefinition } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { definition as configSource } from '../apps/config-source/src/service.js';
import { definition as syncLoop } from '../apps/sync-loop/src/service.js';
import { definition as podWorker } from '../apps/pod-worker/src/service.js';
import { definition as pleg } from '../apps/pleg/src/service.js';
import { definition as prober } from '../apps/prober/src/service.js';
import { definition as statusManager } from '../apps/status-manager/src/service.js';
import { definition as criGateway } from '../apps/cri-gateway/src/service.js';

describe('README configuration table', () => {
  it('lists exactly the variables the services read', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'));
    const documented = new Set([...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    const defs = [configSource, syncLoop, podWorker, pleg, prober, statusManager, criGateway] as unknown as ServiceDefinition<EnvSchema>[];
    const read = new Set(defs.flatMap((d) => Object.keys(serviceSchema(d))));
    assert.deepEqual([...read].filter((v) => !documented.has(v)), [], 'read but not documented');
    assert.deepEqual([...documented].filter((v) => v && !read.has(v)), [], 'documented but not read');
  });
});
