import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CriError } from './errors.js';
import { FakeCri } from './testing.js';

describe('FakeCri', () => {
  it('records calls and answers from handlers', async () => {
    const cri = new FakeCri().onRuntime('RunPodSandbox', (req) => ({ podSandboxId: `sb-${req.config?.metadata?.name ?? ''}` }));
    const res = await cri.runtime('RunPodSandbox', { config: { metadata: { name: 'web', namespace: 'default', uid: 'u1' } } });
    assert.equal(res.podSandboxId, 'sb-web');
    assert.deepEqual(cri.calls.map((c) => `${c.service}/${c.method}`), ['runtime/RunPodSandbox']);
  });

  it('fails the next calls as told, then answers again', async () => {
    const cri = new FakeCri().failNext('runtime', 'StartContainer', 'Unavailable').failNext('runtime', 'StartContainer', 'DeadlineExceeded');
    await assert.rejects(cri.runtime('StartContainer', { containerId: 'c' }), (e: unknown) => e instanceof CriError && e.code === 'Unavailable');
    await assert.rejects(cri.runtime('StartContainer', { containerId: 'c' }), (e: unknown) => e instanceof CriError && e.code === 'DeadlineExceeded');
    assert.deepEqual(await cri.runtime('StartContainer', { containerId: 'c' }), {});
    assert.equal(cri.callsOf('StartContainer').length, 3);
  });
});
