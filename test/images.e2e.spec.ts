/**
 * The images built by deploy/images/build.sh, in the real containerd that
 * deploy/runtime.sh runs: both are in the k8s.io namespace, and containers
 * from them run (and report their exit code).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { runtimeKind } from './support/runtime.js';

const address = process.env['KS_RUNTIME_ADDRESS'] ?? execFileSync('bash', [join(REPO_ROOT, 'deploy', 'runtime.sh'), 'address'], { encoding: 'utf8' }).trim();
const PAUSE = 'localhost/kubelet-split/pause:3.10';
const BUSYBOX = 'localhost/kubelet-split/busybox:1.35';

function ctr(...args: string[]) {
  return spawnSync('ctr', ['--address', address, '-n', 'k8s.io', ...args], { encoding: 'utf8', timeout: 60_000 });
}

function run(image: string, ...cmd: string[]) {
  return ctr('run', '--rm', image, `ks-image-test-${randomBytes(4).toString('hex')}`, ...cmd);
}

describe('locally built images in containerd', { timeout: 120_000 }, () => {
  it('both images are in the k8s.io namespace', () => {
    const ls = ctr('images', 'ls', '-q');
    assert.equal(ls.status, 0, ls.stderr);
    const names = ls.stdout.split('\n');
    assert.ok(names.includes(PAUSE), `${PAUSE} in ${ls.stdout}`);
    assert.ok(names.includes(BUSYBOX), `${BUSYBOX} in ${ls.stdout}`);
  });

  it("the pause image is containerd's sandbox image", () => {
    // runtime.sh renders the config beside the socket's directory: <state>/containerd-config.toml.
    const conf = readFileSync(join(dirname(dirname(address)), 'containerd-config.toml'), 'utf8');
    // containerd 1.6 (config version 2): the CRI plugin's sandbox_image; containerd 2 (version 3): the images plugin's pinned sandbox image.
    assert.match(conf, runtimeKind() === 'containerd2' ? new RegExp(`\\[plugins\\.'io\\.containerd\\.cri\\.v1\\.images'\\.pinned_images\\]\\s+(#.*\\s+)*sandbox = "${PAUSE}"`) : new RegExp(`sandbox_image = "${PAUSE}"`));
  });

  it('a container from the test image runs and exits 0', () => {
    const r = run(BUSYBOX, 'sh', '-c', 'echo hello from busybox && exit 0');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /hello from busybox/);
  });

  it('a failing command reports its exit code', () => {
    const r = run(BUSYBOX, 'sh', '-c', 'exit 3');
    assert.equal(r.status, 3, r.stderr);
  });

  it('the test image has the tools the tests use (sh, sleep, httpd, nc, wget)', () => {
    const r = run(BUSYBOX, 'sh', '-c', 'for t in sleep httpd nc wget; do command -v $t || exit 1; done');
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });

  it('the pause binary runs', () => {
    const r = run(PAUSE, '/pause', '-v');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /kubelet-split pause/);
  });
});
