/** The README's configuration table names every variable that some service reads, and no other. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvSchema } from '@app/config';
import { SERVICE_NAMES, serviceSchema, type ServiceName } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { configSourceConfigSchema } from '../apps/config-source/src/config-source.config.js';
import { syncLoopConfigSchema } from '../apps/sync-loop/src/sync-loop.config.js';
import { podWorkerConfigSchema } from '../apps/pod-worker/src/pod-worker.config.js';
import { plegConfigSchema } from '../apps/pleg/src/pleg.config.js';
import { proberConfigSchema } from '../apps/prober/src/prober.config.js';
import { statusManagerConfigSchema } from '../apps/status-manager/src/status-manager.config.js';
import { criGatewayConfigSchema } from '../apps/cri-gateway/src/cri-gateway.config.js';

/** Each service's own variables (its `<app>.config.ts`); serviceSchema adds the shared ones. */
const schemas: Record<ServiceName, EnvSchema> = {
  'config-source': configSourceConfigSchema,
  'sync-loop': syncLoopConfigSchema,
  'pod-worker': podWorkerConfigSchema,
  pleg: plegConfigSchema,
  prober: proberConfigSchema,
  'status-manager': statusManagerConfigSchema,
  'cri-gateway': criGatewayConfigSchema,
};

describe('README configuration table', () => {
  it('lists exactly the variables the services read', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'));
    const documented = new Set([...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    const read = new Set(SERVICE_NAMES.flatMap((service) => Object.keys(serviceSchema({ service, schema: schemas[service] }))));
    assert.deepEqual([...read].filter((v) => !documented.has(v)), [], 'read but not documented');
    assert.deepEqual([...documented].filter((v) => v && !read.has(v)), [], 'documented but not read');
  });
});
