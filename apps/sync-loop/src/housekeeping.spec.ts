import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRecord, PodStatus, PodSyncStatusRecord } from '@app/contracts';
import { decideHousekeeping } from './housekeeping.js';
import type { RuntimePod } from './ports.js';

const rec = (uid: string, extra: Partial<PodRecord> = {}): [string, PodRecord] => [uid, { pod: { metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 100, admitted: true, ...extra }];
const rp = (uid: string, running = true): RuntimePod => ({ uid, name: uid, namespace: 'default', running });

describe('decideHousekeeping', () => {
  const cases: {
    name: string;
    desired: [string, PodRecord][];
    workers?: [string, PodSyncStatusRecord][];
    runtime?: RuntimePod[];
    statuses?: [string, PodStatus][];
    want: { kill?: string[]; orphanedStatuses?: string[]; possiblyRunning?: string[]; restart?: string[]; terminalToDelete?: string[]; contentToRemove?: string[] };
  }[] = [
    { name: 'a runtime pod nobody wants is killed', desired: [], runtime: [rp('x')], want: { kill: ['x'] } },
    { name: 'a runtime pod with nothing running is not killed; its content is removed', desired: [], runtime: [rp('x', false)], want: { contentToRemove: ['x'] } },
    { name: 'a deleted pod whose worker finished: its exited containers and stopped sandbox are removed', desired: [], runtime: [rp('x', false)], workers: [['x', { terminatingAt: 2, terminatedAt: 3, finished: true }]], want: { contentToRemove: ['x'] } },
    { name: 'a deleted pod whose worker has not finished keeps its content (SyncTerminatedPod runs)', desired: [], runtime: [rp('x', false)], workers: [['x', { terminatingAt: 2, terminatedAt: 3 }]], want: {} },
    { name: 'a finished pod still desired (Succeeded, in the API) keeps its content', desired: [rec('done')], runtime: [rp('done', false)], workers: [['done', { terminatingAt: 2, terminatedAt: 3, finished: true }]], statuses: [['done', { phase: 'Succeeded' }]], want: {} },
    { name: 'a desired runtime pod is left alone', desired: [rec('a')], runtime: [rp('a')], want: { possiblyRunning: ['a'] } },
    { name: 'a pod its worker is terminating is left to the worker', desired: [], runtime: [rp('x')], workers: [['x', { syncedAt: 1, terminatingAt: 2 }]], want: {} },
    { name: 'a pod whose worker finished but still runs is killed again', desired: [], runtime: [rp('x')], workers: [['x', { terminatingAt: 2, terminatedAt: 3 }]], want: { kill: ['x'] } },
    { name: 'an evicted pod whose worker finished: its content is removed though it is still in the API', desired: [rec('ev')], runtime: [rp('ev', false)], workers: [['ev', { terminatingAt: 2, terminatedAt: 3, finished: true }]], statuses: [['ev', { phase: 'Failed', reason: 'Evicted' }]], want: { contentToRemove: ['ev'] } },
    { name: 'statuses of pods no longer desired are orphaned', desired: [rec('a')], statuses: [['a', { phase: 'Running' }], ['gone', { phase: 'Succeeded' }]], want: { orphanedStatuses: ['gone'], possiblyRunning: ['a'] } },
    { name: 'terminal pods keep no probe workers', desired: [rec('a'), rec('done')], statuses: [['done', { phase: 'Succeeded' }]], want: { possiblyRunning: ['a'] } },
    { name: 'rejected pods keep no probe workers', desired: [rec('r', { admitted: false })], want: {} },
    { name: 'terminating pods keep their probe workers', desired: [rec('t')], workers: [['t', { terminatingAt: 5 }]], want: { possiblyRunning: ['t'] } },
    { name: 'a terminated pod added again is restarted', desired: [rec('again', { addedAt: 500 })], workers: [['again', { terminatingAt: 100, terminatedAt: 200, finished: true }]], want: { restart: ['again'] } },
    // Its worker would drop a SyncPodCreate before it finished, and the restart is then not repeated for a while.
    { name: 'a terminated pod added again waits until its worker finished', desired: [rec('again', { addedAt: 500 })], workers: [['again', { terminatingAt: 100, terminatedAt: 200 }]], want: {} },
    // Added again (addedAt 150) while it still terminated (until 200): the worker remembered the SyncPodCreate.
    { name: 'a pod added again while it terminated is restarted once its worker finished', desired: [rec('again', { addedAt: 150 })], workers: [['again', { terminatingAt: 100, terminatedAt: 200, finished: true, restartRequested: true }]], want: { restart: ['again'] } },
    { name: 'a pod added again while it terminated waits until its worker finished', desired: [rec('again', { addedAt: 150 })], workers: [['again', { terminatingAt: 100, terminatedAt: 200, restartRequested: true }]], want: {} },
    { name: 'a terminated pod not added again is not restarted', desired: [rec('old', { addedAt: 100 })], workers: [['old', { terminatingAt: 150, terminatedAt: 200 }]], want: {} },
    // filterTerminalPodsToDelete: deleted, terminal (in the API or in the saved status), unknown to the workers, not running.
    { name: 'a deleted pod terminal in the API that no worker knows is given to the workers to finish', desired: [rec('t', { pod: { metadata: { uid: 't', name: 't', namespace: 'default', deletionTimestamp: '2026-12-02T00:00:00Z' }, spec: { containers: [] }, status: { phase: 'Failed' } } })], want: { terminalToDelete: ['t'], possiblyRunning: ['t'] } },
    { name: 'a deleted pod rejected at admission (terminal in its saved status) likewise', desired: [rec('r', { admitted: false, pod: { metadata: { uid: 'r', name: 'r', namespace: 'default', deletionTimestamp: '2026-12-02T00:00:00Z' }, spec: { containers: [] } } })], statuses: [['r', { phase: 'Failed' }]], want: { terminalToDelete: ['r'] } },
    { name: 'not one a worker knows', desired: [rec('t', { pod: { metadata: { uid: 't', name: 't', namespace: 'default', deletionTimestamp: '2026-12-02T00:00:00Z' }, spec: { containers: [] }, status: { phase: 'Succeeded' } } })], workers: [['t', { terminatingAt: 1, terminatedAt: 2 }]], want: {} },
    { name: 'not one still running in the runtime (the kill path\'s)', desired: [rec('t', { pod: { metadata: { uid: 't', name: 't', namespace: 'default', deletionTimestamp: '2026-12-02T00:00:00Z' }, spec: { containers: [] }, status: { phase: 'Succeeded' } } })], runtime: [rp('t')], want: { possiblyRunning: ['t'] } },
    { name: 'not one that is not deleted, nor one deleted but not terminal', desired: [rec('a', { pod: { metadata: { uid: 'a', name: 'a', namespace: 'default' }, spec: { containers: [] }, status: { phase: 'Failed' } } }), rec('b', { pod: { metadata: { uid: 'b', name: 'b', namespace: 'default', deletionTimestamp: '2026-12-02T00:00:00Z' }, spec: { containers: [] }, status: { phase: 'Running' } } })], want: { possiblyRunning: ['a', 'b'] } },
    { name: 'a pod that ended by itself is not restarted', desired: [rec('ok', { addedAt: 500 })], workers: [['ok', { terminatedAt: 200 }]], statuses: [['ok', { phase: 'Succeeded' }]], want: {} },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const d = decideHousekeeping({
        desired: new Map(tc.desired),
        workers: new Map(tc.workers ?? []),
        runtimePods: tc.runtime ?? [],
        statuses: new Map(tc.statuses ?? []),
      });
      assert.deepEqual(
        { kill: d.kill.map((p) => p.uid), orphanedStatuses: d.orphanedStatuses, possiblyRunning: d.possiblyRunning, restart: d.restart, terminalToDelete: d.terminalToDelete, contentToRemove: d.contentToRemove },
        { kill: [], orphanedStatuses: [], possiblyRunning: [], restart: [], terminalToDelete: [], contentToRemove: [], ...tc.want },
      );
    });
  }
});
