import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '@app/config';
import { SERVICE_NAMES } from '@app/contracts';
import { loadServiceConfig } from './bootstrap.js';
import { moduleEnv, moduleEnvPrefix, parseTarget } from './targets.js';

describe('TARGET', () => {
  const cases: { name: string; raw: string | undefined; want: readonly string[] | 'error' }[] = [
    { name: 'unset runs every service', raw: undefined, want: SERVICE_NAMES },
    { name: '"all" runs every service', raw: 'all', want: SERVICE_NAMES },
    { name: 'one service', raw: 'pleg', want: ['pleg'] },
    { name: 'a list, in the services\' order whatever its order', raw: 'prober,pleg', want: ['pleg', 'prober'] },
    { name: 'an unknown name is refused', raw: 'pleg,kubelet', want: 'error' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      if (tc.want === 'error') assert.throws(() => parseTarget(tc.raw), ConfigError);
      else assert.deepEqual(parseTarget(tc.raw), tc.want);
    });
  }
});

describe('a module\'s environment in a process of several', () => {
  it('<SERVICE>__<VARIABLE> reaches that module alone', () => {
    const source = { NODE_NAME: 'n1', POD_WORKER__PORT: '2001', POD_WORKER__SYNC_FREQUENCY: '5m', SYNC_LOOP__PORT: '2002', SYNC_LOOP__SYNC_FREQUENCY: '30s' };
    const worker = moduleEnv('pod-worker', source, 7);
    const loop = moduleEnv('sync-loop', source, 7);
    assert.deepEqual([worker['PORT'], worker['SYNC_FREQUENCY'], worker['NODE_NAME']], ['2001', '5m', 'n1']);
    assert.deepEqual([loop['PORT'], loop['SYNC_FREQUENCY'], loop['NODE_NAME']], ['2002', '30s', 'n1']);
    assert.equal(moduleEnvPrefix('status-manager'), 'STATUS_MANAGER__');
  });

  it('each module connects as its own NATS user by default, on its own default port', () => {
    const source = { NODE_NAME: 'n1' };
    const configs = SERVICE_NAMES.map((service) => loadServiceConfig({ service, schema: {} }, moduleEnv(service, source, SERVICE_NAMES.length)));
    assert.deepEqual(configs.map((c) => c.NATS_USER), [...SERVICE_NAMES]);
    assert.equal(new Set(configs.map((c) => c.PORT)).size, SERVICE_NAMES.length);
  });

  it('a plain PORT is refused when the process runs several modules, and taken when it runs one', () => {
    assert.throws(() => moduleEnv('pleg', { PORT: '9000' }, 2), /PORT is one port/);
    assert.equal(moduleEnv('pleg', { PORT: '9000' }, 1)['PORT'], '9000');
  });
});
