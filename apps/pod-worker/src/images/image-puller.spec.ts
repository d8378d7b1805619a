import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod } from '@app/contracts';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { FakeCri } from '@app/cri/testing';
import { ImagePuller } from './image-puller.js';
import { FakeApiObjects } from '../testing.js';

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
  return { cri, events, clock, puller: new ImagePuller({ cri, events, clock, pullBackOff: { initialMs: 10_000, maxMs: 300_000 } }) };
}

describe('ImagePuller: the kubelet image pull policies', () => {
  it('IfNotPresent with the image there: no pull, "already present"', async () => {
    const { puller, cri, events } = setup(true);
    // The image's user comes with it (no USER in this image: none), for runAsUser and runAsNonRoot.
    assert.deepEqual(await puller.ensure(pod, c('x:1', 'IfNotPresent')), { ref: 'sha256:abc', user: {} });
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

describe('ImagePuller: imagePullSecrets (getPullSecretsForPod, the keyring, PullImage with auth)', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const withSecrets = (names: string[]): Pod => ({ ...pod, spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) } });
  function secrets() {
    const objects = new FakeApiObjects();
    const dockerconfig = (auths: Record<string, unknown>) => ({ secretType: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } });
    objects.put('Secret', 'default', 'regcred', dockerconfig({ 'registry.example.com': { username: 'alice', password: 'a-pw' } }));
    objects.put('Secret', 'default', 'team', dockerconfig({ 'registry.example.com/team': { auth: b64('bob:b-pw') } }));
    return objects;
  }
  function setupWith(objects: FakeApiObjects, pullFails: (auth: unknown) => boolean = () => false) {
    const cri = new FakeCri()
      .onImage('ImageStatus', () => ({ image: null, info: {} }) as never)
      .onImage('PullImage', (req) => {
        if (pullFails(req.auth)) throw new Error(`unauthorized for ${req.auth?.username ?? 'anonymous'}`);
        return { imageRef: 'sha256:pulled' };
      });
    const events = new Events();
    return { cri, events, puller: new ImagePuller({ cri, events, clock: new FakeClock(0), pullBackOff: { initialMs: 10_000, maxMs: 300_000 }, objects }) };
  }

  it('the matching secret\'s credentials go to PullImage; the secret is not in any event', async () => {
    const { puller, cri, events } = setupWith(secrets());
    assert.deepEqual(await puller.ensure(withSecrets(['regcred']), c('registry.example.com/app:1')), { ref: 'sha256:pulled' });
    assert.deepEqual(cri.callsOf('PullImage'), [{ image: { image: 'registry.example.com/app:1' }, auth: { username: 'alice', password: 'a-pw' } }]);
    assert.ok(!events.events.some((e) => e.message.includes('a-pw')));
  });

  it('the most specific credential is tried first, the next one when it fails', async () => {
    const { puller, cri } = setupWith(secrets(), (auth) => (auth as { username?: string } | undefined)?.username === 'bob');
    assert.deepEqual(await puller.ensure(withSecrets(['regcred', 'team']), c('registry.example.com/team/app:1')), { ref: 'sha256:pulled' });
    assert.deepEqual(cri.callsOf('PullImage').map((r) => (r as { auth?: { username: string } }).auth?.username), ['bob', 'alice']);
  });

  it('an image of another registry is pulled without credentials', async () => {
    const { puller, cri } = setupWith(secrets());
    await puller.ensure(withSecrets(['regcred']), c('quay.io/app:1'));
    assert.deepEqual(cri.callsOf('PullImage'), [{ image: { image: 'quay.io/app:1' } }]);
  });

  it('a missing pull secret is a FailedToRetrieveImagePullSecret warning and the pull goes on without it', async () => {
    const { puller, cri, events } = setupWith(secrets());
    assert.deepEqual(await puller.ensure(withSecrets(['nope', 'regcred']), c('registry.example.com/app:1')), { ref: 'sha256:pulled' });
    const warning = events.events.find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
    assert.equal(warning?.type, 'Warning');
    assert.equal(warning?.message, 'Unable to retrieve some image pull secrets (nope); attempting to pull the image may not succeed.');
    assert.equal(cri.callsOf('PullImage').length, 1);
  });

  it('when every credential fails, the pull fails with their errors', async () => {
    const { puller } = setupWith(secrets(), () => true);
    const r = await puller.ensure(withSecrets(['regcred', 'team']), c('registry.example.com/team/app:1'));
    assert.deepEqual(r, { error: { reason: 'ErrImagePull', message: 'Failed to pull image "registry.example.com/team/app:1": [unauthorized for bob, unauthorized for alice]' } });
  });
});
