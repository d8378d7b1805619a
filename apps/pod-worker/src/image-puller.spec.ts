import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { FakeCri } from '@app/cri/testing';
import { ImagePuller } from './runtime-manager.js';

class Events extends RecordingEventRecorder {
  get seen(): string[] {
    return this.events.map((e) => `${e.type}/${e.reason}`);
  }
}

const pod: Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [] } };
const c = (image: string, imagePullPolicy?: Container['imagePullPolicy']): Container => ({ name: 'c', image, ...(imagePullPolicy ? { imagePullPolicy } : {}) });

function setup(present: boolean) {
  const cri = new FakeCri()
    .onImage('ImageStatus', () => (present ? { image: { id: 'sha256:abc', repoTags: [], repoDigests: [], size: '1', uid: null, username: '', spec: null, pinned: false }, info: {} } : { image: null, info: {} }) as never)
    .onImage('PullImage', () => ({ imageRef: 'sha256:pulled' }));
  const events = new Events();
  const clock = new FakeClock(0);
  return { cri, events, clock, puller: new ImagePuller(cri, events, clock, { initialMs: 10_000, maxMs: 300_000 }) };
}

describe('ImagePuller: the kubelet image pull policies', () => {
  it('IfNotPresent with the image there: no pull, "already present"', async () => {
    const { puller, cri, events } = setup(true);
    assert.deepEqual(await puller.ensure(pod, c('x:1', 'IfNotPresent')), { ref: 'sha256:abc' });
    assert.equal(cri.callsOf('PullImage').length, 0);
    assert.deepEqual(events.seen, ['Normal/Pulled']);
  });

  it('IfNotPresent without it: pulled', async () => {
    const { puller, cri } = setup(false);
    assert.deepEqual(await puller.ensure(pod, c('x:1', 'IfNotPresent')), { ref: 'sha256:pulled' });
    assert.equal(cri.callsOf('PullImage').length, 1);
  });

  it('Always: pulled even when present', async () => {
    const { puller, cri } = setup(true);
    await puller.ensure(pod, c('x:latest', 'Always'));
    assert.equal(cri.callsOf('PullImage').length, 1);
  });

  it('Never without the image: ErrImageNeverPull, no pull', async () => {
    const { puller, cri, events } = setup(false);
    const r = await puller.ensure(pod, c('x:1', 'Never'));
    assert.deepEqual(r, { error: { reason: 'ErrImageNeverPull', message: 'Container image "x:1" is not present with pull policy of Never' } });
    assert.equal(cri.callsOf('PullImage').length, 0);
    assert.deepEqual(events.seen, ['Warning/ErrImageNeverPull']);
  });

  it('a failed pull is ErrImagePull, then ImagePullBackOff until the back-off passes, then a new pull', async () => {
    const { puller, cri, clock } = setup(false);
    cri.failNext('image', 'PullImage', 'Unavailable', 'dial tcp 127.0.0.1:1: connect: connection refused');
    const first = await puller.ensure(pod, c('127.0.0.1:1/x:1'));
    assert.equal('error' in first && first.error.reason, 'ErrImagePull');
    assert.match('error' in first ? first.error.message : '', /connection refused/);
    await clock.step(5_000);
    const second = await puller.ensure(pod, c('127.0.0.1:1/x:1'));
    assert.equal('error' in second && second.error.reason, 'ImagePullBackOff');
    assert.equal(cri.callsOf('PullImage').length, 1, 'no pull during the back-off');
    await clock.step(5_001);
    assert.deepEqual(await puller.ensure(pod, c('127.0.0.1:1/x:1')), { ref: 'sha256:pulled' });
  });
});
