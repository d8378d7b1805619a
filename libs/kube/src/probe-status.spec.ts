import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerState, ContainerStatus, PodStatus } from '@app/contracts';
import { applyProbeResults, type ContainerProbeState } from './probe-status.js';

const running: ContainerState = { running: { startedAt: '2026-11-30T00:00:00Z' } };
const exited = (exitCode: number): ContainerState => ({ terminated: { exitCode } });
const waiting: ContainerState = { waiting: { reason: 'PodInitializing' } };
const cs = (name: string, state: ContainerState, ready = false): ContainerStatus => ({ name, state, ready, restartCount: 0, image: 'img', imageID: '', containerID: `containerd://${name}` });

const initContainers: Container[] = [{ name: 'init' }, { name: 'proxy', restartPolicy: 'Always' }];

/** Started and ready as the names say: `started` and `ready` list the container names that are. */
const probes = (started: string[], ready: string[]): ContainerProbeState => ({
  isContainerStarted: (s) => s.state?.running !== undefined && started.includes(s.name),
  isContainerReady: (s) => s.state?.running !== undefined && ready.includes(s.name),
});

describe('applyProbeResults (prober.Manager.UpdatePodStatus)', () => {
  const cases: { name: string; status: PodStatus; started: string[]; ready: string[]; want: Record<string, [boolean | undefined, boolean]> }[] = [
    {
      name: 'a regular container started and ready',
      status: { containerStatuses: [cs('app', running)] },
      started: ['app'],
      ready: ['app'],
      want: { app: [true, true] },
    },
    {
      name: 'a regular container started, not ready',
      status: { containerStatuses: [cs('app', running, true)] },
      started: ['app'],
      ready: [],
      want: { app: [true, false] },
    },
    {
      name: 'not started: ready left as it was',
      status: { containerStatuses: [cs('app', running, true), cs('web', exited(1))] },
      started: [],
      ready: ['app'],
      want: { app: [false, true], web: [false, false] },
    },
    {
      name: 'a regular init container is ready once it exited 0, whatever the probes',
      status: { initContainerStatuses: [cs('init', exited(0))] },
      started: [],
      ready: [],
      want: { init: [false, true] },
    },
    {
      name: 'a regular init container that failed or runs: ready left as it was',
      status: { initContainerStatuses: [cs('init', exited(1))] },
      started: ['init'],
      ready: ['init'],
      want: { init: [false, false] },
    },
    {
      name: 'a running regular init container: started, but ready only by exiting',
      status: { initContainerStatuses: [cs('init', running)] },
      started: ['init'],
      ready: ['init'],
      want: { init: [true, false] },
    },
    {
      name: 'a sidecar is probed like a regular container',
      status: { initContainerStatuses: [cs('proxy', running)] },
      started: ['proxy'],
      ready: ['proxy'],
      want: { proxy: [true, true] },
    },
    {
      name: 'a sidecar that has not started keeps its ready flag',
      status: { initContainerStatuses: [cs('proxy', waiting)] },
      started: [],
      ready: ['proxy'],
      want: { proxy: [false, false] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const status = structuredClone(tc.status);
      applyProbeResults(status, initContainers, probes(tc.started, tc.ready));
      const got = Object.fromEntries([...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].map((s) => [s.name, [s.started, s.ready]]));
      assert.deepEqual(got, tc.want);
    });
  }

  it('an init status whose spec is unknown is taken for a regular init container', () => {
    const status: PodStatus = { initContainerStatuses: [cs('proxy', running)] };
    applyProbeResults(status, undefined, probes(['proxy'], ['proxy']));
    assert.deepEqual([status.initContainerStatuses?.[0]?.started, status.initContainerStatuses?.[0]?.ready], [true, false]);
  });
});
