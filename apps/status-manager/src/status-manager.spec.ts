import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type PodRecord, type PodStatus, type StatusCommandMessage, type StatusVerb } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { DesiredPods, StatusStore } from './ports.js';
import { StatusManager } from './status-manager.js';
import type { StatusEntry } from './status-store.js';

class MemoryStatusStore extends StatusStore {
  readonly entries = new Map<string, StatusEntry>();
  load(): Promise<[string, StatusEntry][]> {
    return Promise.resolve([...this.entries]);
  }
  put(uid: string, entry: StatusEntry): Promise<void> {
    this.entries.set(uid, structuredClone(entry));
    return Promise.resolve();
  }
  delete(uid: string): Promise<void> {
    this.entries.delete(uid);
    return Promise.resolve();
  }
}

/** A pods bucket that no longer holds the pod (it was removed before its last status call). */
class NoDesiredPods extends DesiredPods {
  all(): Promise<PodRecord[]> {
    return Promise.resolve([]);
  }
  get(): Promise<PodRecord | undefined> {
    return Promise.resolve(undefined);
  }
}

const running: PodStatus = {
  phase: 'Running',
  containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0, containerID: 'containerd://a', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
};

function call(verb: StatusVerb, args: Record<string, unknown>): [StatusVerb, StatusCommandMessage] {
  return [verb, { type: MessageTypes.statusCommand, podUid: 'uid-1', args: { podName: 'web-node', podNamespace: 'default', ...args } }];
}

describe('StatusManager: the last TerminatePod of a pod already gone from the pods bucket', () => {
  const cases = [
    { name: 'a static pod (its annotations sent with the call) keeps a non-terminal phase', annotations: { 'kubernetes.io/config.source': 'file' }, phase: 'Running' },
    { name: 'an API pod becomes Failed', annotations: undefined, phase: 'Failed' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const manager = new StatusManager(new MemoryStatusStore(), new NoDesiredPods(), new FakeClock(), silentLogger());
      const extra = tc.annotations ? { podAnnotations: tc.annotations } : {};
      await manager.handleCommand(...call('SetPodStatus', { status: running, ...extra }));
      const r = await manager.handleCommand(...call('TerminatePod', { status: running, ...extra }));
      assert.equal(r?.entry?.status.phase, tc.phase);
    });
  }

  it('a static pod added again with the same UID is Running again', async () => {
    const manager = new StatusManager(new MemoryStatusStore(), new NoDesiredPods(), new FakeClock(), silentLogger());
    const podAnnotations = { 'kubernetes.io/config.source': 'file' };
    await manager.handleCommand(...call('TerminatePod', { status: running, podAnnotations }));
    const again: PodStatus = { ...running, containerStatuses: [{ ...running.containerStatuses![0]!, containerID: 'containerd://b' }] };
    const r = await manager.handleCommand(...call('SetPodStatus', { status: again, podAnnotations }));
    assert.equal(r?.dropped, undefined);
    assert.equal(r?.entry?.status.phase, 'Running');
    assert.equal(r?.entry?.status.containerStatuses?.[0]?.containerID, 'containerd://b');
  });
});
