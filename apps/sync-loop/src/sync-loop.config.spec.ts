import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseEnv } from '@app/config';
import { syncLoopConfigSchema } from './sync-loop.config.js';

const { CONTAINER_LOG_MAX_SIZE, CONTAINER_LOG_MAX_FILES, CONTAINER_LOG_MONITOR_INTERVAL, CONTAINER_LOG_MAX_WORKERS } = syncLoopConfigSchema;
const schema = { CONTAINER_LOG_MAX_SIZE, CONTAINER_LOG_MAX_FILES, CONTAINER_LOG_MONITOR_INTERVAL, CONTAINER_LOG_MAX_WORKERS };

describe('sync-loop config: the container log manager\'s settings', () => {
  it('defaults to the kubelet\'s: 10Mi, 5 files, every 10s, one worker', () => {
    assert.deepEqual({ ...parseEnv(schema, {}) }, { CONTAINER_LOG_MAX_SIZE: 10 * 1024 * 1024, CONTAINER_LOG_MAX_FILES: 5, CONTAINER_LOG_MONITOR_INTERVAL: 10_000, CONTAINER_LOG_MAX_WORKERS: 1 });
  });

  const good = [
    { name: 'a binary quantity', env: { CONTAINER_LOG_MAX_SIZE: '10Ki' }, want: { CONTAINER_LOG_MAX_SIZE: 10240 } },
    { name: 'a decimal quantity', env: { CONTAINER_LOG_MAX_SIZE: '1.5M' }, want: { CONTAINER_LOG_MAX_SIZE: 1_500_000 } },
    { name: 'plain bytes', env: { CONTAINER_LOG_MAX_SIZE: '4096' }, want: { CONTAINER_LOG_MAX_SIZE: 4096 } },
    { name: 'negative: rotation off', env: { CONTAINER_LOG_MAX_SIZE: '-1' }, want: { CONTAINER_LOG_MAX_SIZE: -1 } },
    { name: 'two files, a second, four workers', env: { CONTAINER_LOG_MAX_FILES: '2', CONTAINER_LOG_MONITOR_INTERVAL: '1s', CONTAINER_LOG_MAX_WORKERS: '4' }, want: { CONTAINER_LOG_MAX_FILES: 2, CONTAINER_LOG_MONITOR_INTERVAL: 1000, CONTAINER_LOG_MAX_WORKERS: 4 } },
  ];
  for (const tc of good) it(tc.name, () => assert.deepEqual({ ...parseEnv(schema, tc.env) }, { ...parseEnv(schema, {}), ...tc.want }));

  const bad = [
    { name: 'not a quantity', env: { CONTAINER_LOG_MAX_SIZE: '10MB' }, want: 'CONTAINER_LOG_MAX_SIZE must be a quantity of bytes like 10Mi, 512Ki or 1G (negative: no rotation), got "10MB"' },
    { name: 'a fraction of a byte', env: { CONTAINER_LOG_MAX_SIZE: '1500m' }, want: 'CONTAINER_LOG_MAX_SIZE must be a whole number of bytes, got "1500m"' },
    { name: 'one file', env: { CONTAINER_LOG_MAX_FILES: '1' }, want: 'CONTAINER_LOG_MAX_FILES must be at least 2, got 1' },
    { name: 'a zero interval', env: { CONTAINER_LOG_MONITOR_INTERVAL: '0' }, want: 'CONTAINER_LOG_MONITOR_INTERVAL must be at least 1s (rotated logs are named to the second), got "0"' },
    { name: 'an interval under a second', env: { CONTAINER_LOG_MONITOR_INTERVAL: '500ms' }, want: 'CONTAINER_LOG_MONITOR_INTERVAL must be at least 1s (rotated logs are named to the second), got "500ms"' },
    { name: 'not a duration', env: { CONTAINER_LOG_MONITOR_INTERVAL: '10' }, want: 'CONTAINER_LOG_MONITOR_INTERVAL must be a duration like 500ms, 10s, 2m or 1h30m, got "10"' },
    { name: 'no workers', env: { CONTAINER_LOG_MAX_WORKERS: '0' }, want: 'CONTAINER_LOG_MAX_WORKERS must be at least 1, got 0' },
  ];
  for (const tc of bad) {
    it(`refuses ${tc.name}, naming the variable`, () => {
      assert.throws(() => parseEnv(schema, tc.env), (e: ConfigError) => e instanceof ConfigError && e.problems.length === 1 && (e.problems[0] ?? '').startsWith(tc.want));
    });
  }
});
