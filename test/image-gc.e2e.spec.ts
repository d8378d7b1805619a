/**
 * Image garbage collection on the real containerd (issue 14): with the
 * thresholds lowered so that the node's disk is always "full" (high 1 %,
 * low 0 %), the sync loop's leader removes an unused extra image once it is
 * older than the minimum age, and keeps the image of a running pod and the
 * sandbox (pause) image; it reports that it could not free enough
 * (FreeDiskSpaceFailed, as upstream's message).
 *
 * The extra image is built here (one small layer with a random file, so its
 * id is its own: a second tag of the busybox image would share busybox's id,
 * and RemoveImage by id would take busybox with it). The minimum age (45s)
 * keeps busybox safe until the pod that uses it runs: every image is first
 * detected when the sync loop takes the lead, and an image in use is never
 * removed. When the stack stops, its pod goes and the GC may then take
 * busybox: the after hook puts the project's images back (deploy/runtime.sh
 * start imports them when missing) for the test files that follow, and
 * checks they are there.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';
import { runtimeAddress } from './support/runtime.js';

const BUSYBOX = 'localhost/kubelet-split/busybox:1.35';
const PAUSE = 'localhost/kubelet-split/pause:3.10';
const MIN_AGE_S = 45;

function ctr(...args: string[]): string {
  const r = spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`ctr ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The snapshotter deploy/runtime.sh configured (overlayfs, or native where overlayfs is not usable). */
function snapshotter(): string {
  const conf = join(dirname(dirname(runtimeAddress())), 'containerd-config.toml');
  try {
    return /^\s*snapshotter = "(.*)"/m.exec(readFileSync(conf, 'utf8'))?.[1] ?? 'overlayfs';
  } catch {
    return 'overlayfs';
  }
}

/** A one-layer image of its own (a random file), imported as `name`; resolves to its id. */
function importUniqueImage(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ks-image-gc-'));
  try {
    const rootfs = join(dir, 'rootfs');
    mkdirSync(rootfs);
    writeFileSync(join(rootfs, 'token'), randomBytes(4096));
    const archive = join(dir, 'archive');
    mkdirSync(archive);
    execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', rootfs, '-cf', join(archive, 'layer.tar'), '.']);
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
    const diffId = sha(readFileSync(join(archive, 'layer.tar')));
    mkdirSync(join(archive, diffId));
    execFileSync('mv', [join(archive, 'layer.tar'), join(archive, diffId, 'layer.tar')]);
    const config = JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['/token'] }, rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] } });
    const configId = sha(config);
    writeFileSync(join(archive, `${configId}.json`), config);
    writeFileSync(join(archive, 'manifest.json'), JSON.stringify([{ Config: `${configId}.json`, RepoTags: [name], Layers: [`${diffId}/layer.tar`] }]));
    execFileSync('tar', ['-C', archive, '-cf', join(dir, 'image.tar'), '.']);
    ctr('images', 'import', '--snapshotter', snapshotter(), join(dir, 'image.tar'));
    return `sha256:${configId}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('image GC on the real containerd', { timeout: 300_000 }, () => {
  const extra = `localhost/kubelet-split/image-gc-e2e:${randomBytes(4).toString('hex')}`;
  const stack = new NodeStack({
    node: 'imggc-e2e',
    // sync-loop last: images are first detected when it leads, and the pod is written right after.
    services: ['cri-gateway', 'pleg', 'status-manager', 'pod-worker', 'config-source', 'sync-loop'],
    env: {
      'sync-loop': { IMAGE_GC_HIGH_THRESHOLD_PERCENT: '1', IMAGE_GC_LOW_THRESHOLD_PERCENT: '0', IMAGE_MINIMUM_GC_AGE: `${MIN_AGE_S}s`, IMAGE_GC_PERIOD: '2s' },
    },
  });
  const images = async () => (await stack.cri.image('ListImages', {})).images;
  const named = async (ref: string) => (await images()).find((i) => i.repoTags.includes(ref));

  before(() => stack.start());
  after(async () => {
    try {
      await stack.stop();
    } finally {
      // The stack's GC may have taken busybox once its pod was gone: put the project's images back.
      const r = spawnSync('bash', [join(REPO_ROOT, 'deploy', 'runtime.sh'), 'start'], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, `runtime.sh start: ${r.stderr}${r.stdout}`);
      const left = ctr('images', 'ls', '-q').split('\n');
      assert.ok(left.includes(BUSYBOX) && left.includes(PAUSE), `the project's images are back for the next test files: ${left.join(', ')}`);
      spawnSync('ctr', ['--address', runtimeAddress(), '-n', 'k8s.io', 'images', 'rm', extra], { encoding: 'utf8' });
    }
  });

  it('removes an unused image under a lowered threshold, and keeps the image of a running pod and the pause image', async (t) => {
    stack.writeManifest(
      'user',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: user\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: app\n      image: ${BUSYBOX}\n      command: ["sleep", "3600"]\n`,
    );
    await stack.waitForPod('user', 'running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 40_000);

    const id = importUniqueImage(extra);
    const imported = Date.now();
    assert.equal((await named(extra))?.id, id, 'the extra image is listed by the CRI');
    const pause = await named(PAUSE);
    t.diagnostic(`extra ${extra} (${id}); pause ${pause?.id ?? 'missing'} pinned=${String(pause?.pinned)}`);

    // Every pass finds the disk over 1 % and cannot free it all: FreeDiskSpaceFailed, upstream's message.
    const failed = await stack.waitFor('a FreeDiskSpaceFailed event', () => stack.events.find((e) => e.reason === 'FreeDiskSpaceFailed'), 20_000);
    assert.match(failed.message, /^Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found \d+ bytes eligible to free\.$/);
    assert.equal(failed.involvedObject.kind, 'Node');

    // Passes run every 2s; younger than the minimum age, the extra image stays.
    const seen = stack.events.filter((e) => e.reason === 'FreeDiskSpaceFailed').length;
    await stack.waitFor('two more image GC passes', () => (stack.events.filter((e) => e.reason === 'FreeDiskSpaceFailed').length >= seen + 2 ? true : undefined), 20_000);
    if (Date.now() - imported < (MIN_AGE_S - 5) * 1000) assert.ok(await named(extra), 'an image younger than the minimum age is kept');

    await stack.waitFor('the extra image to be removed', async () => ((await named(extra)) === undefined ? true : undefined), (MIN_AGE_S + 60) * 1000);
    t.diagnostic(`removed ${Math.round((Date.now() - imported) / 1000)}s after its import`);
    assert.ok((await images()).every((i) => i.id !== id), 'gone by id too');

    // Kept: the running pod's image, and the sandbox image.
    assert.ok(await named(BUSYBOX), 'the image of the running pod stays');
    assert.ok(await named(PAUSE), 'the pause image stays');
    const s = await stack.waitForPod('user', 'still running', (x) => x.containerStatuses?.[0]?.state?.running !== undefined);
    assert.equal(s.containerStatuses?.[0]?.restartCount ?? 0, 0);
    stack.removeManifest('user');
  });
});
