import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStatus } from '@app/contracts';
import { newOomKills, oomKillMessage } from './oom-kills.js';

const oom = (id: string) => ({ terminated: { exitCode: 137, reason: 'OOMKilled', containerID: `containerd://${id}` } });
const running = { running: { startedAt: '2026-12-01T00:00:00Z' } };

describe('OOM kills newly shown by a pod status', () => {
  it('a container whose state just became OOMKilled is one kill', () => {
    const before: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: true, restartCount: 0, image: 'b', imageID: '', state: running }] };
    const after: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: false, restartCount: 0, image: 'b', imageID: '', state: oom('a1') }] };
    assert.deepEqual(newOomKills(before, after), [{ container: 'hog', init: false, containerId: 'containerd://a1', exitCode: 137 }]);
  });
  it('the same kill moving from state to lastState on restart is not a second one', () => {
    const before: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: false, restartCount: 0, image: 'b', imageID: '', state: oom('a1') }] };
    const after: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: true, restartCount: 1, image: 'b', imageID: '', state: running, lastState: oom('a1') }] };
    assert.deepEqual(newOomKills(before, after), []);
  });
  it('the next instance killed again is a new kill', () => {
    const before: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: true, restartCount: 1, image: 'b', imageID: '', state: running, lastState: oom('a1') }] };
    const after: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'hog', ready: false, restartCount: 1, image: 'b', imageID: '', state: oom('a2'), lastState: oom('a1') }] };
    assert.deepEqual(newOomKills(before, after).map((k) => k.containerId), ['containerd://a2']);
  });
  it('an init container counts, other terminations do not, and a first status counts', () => {
    const after: PodStatus = {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'setup', ready: false, restartCount: 0, image: 'b', imageID: '', state: oom('i1') }],
      containerStatuses: [{ name: 'main', ready: false, restartCount: 0, image: 'b', imageID: '', state: { terminated: { exitCode: 1, reason: 'Error', containerID: 'containerd://m1' } } }],
    };
    const kills = newOomKills(undefined, after);
    assert.deepEqual(kills, [{ container: 'setup', init: true, containerId: 'containerd://i1', exitCode: 137 }]);
    assert.equal(oomKillMessage(kills[0]!), 'Container setup was killed: it ran out of memory (OOMKilled, exit code 137)');
  });
});
