/**
 * The Go PLEG (contrib/pleg-go) as the compose stack's pleg (part of the
 * compose lane: deploy/compose/test.sh runs this file after its cluster
 * step; it needs the images the lane builds, kubelet-split/pleg-go among
 * them): the stack brought up as a user would swap one subsystem,
 * `COMPOSE_FILE=docker-compose.yml:deploy/compose/pleg-go.yml up.sh`
 * (test/support/compose-node.ts), and the node's e2e subset through it, as
 * a user checks it in `GET /pods`:
 *  - the pleg container runs the Go binary, and it leads;
 *  - a pod with a readiness probe becomes Running and Ready;
 *  - a container that keeps exiting is restarted, its restartCount growing
 *    and its waiting reason CrashLoopBackOff between the restarts;
 *  - a deleted pod (its manifest removed) is gone from `/pods`.
 * None of it happens without a PLEG: the pod workers wait for pod-cache
 * entries newer than their syncs, which only the PLEG writes.
 * Environment (deploy/compose/test.sh sets it): KS_COMPOSE_IMAGE_TAG,
 * DOCKER_HOST, KS_RUNTIME_ADDRESS, KS_COMPOSE_RUNTIME_ROOT.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ContainerStatus, V1PodList } from '@kubernetes/client-node';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { ComposeNode, laneEnv, waitFor } from './support/compose-node.js';

const NODE = `ks-compose-pleg-go-${Math.random().toString(16).slice(2, 8)}`;
const IMAGE = 'localhost/kubelet-split/busybox:1.35';



const manifest = (name: string, container: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n${container}`;

describe('compose with the Go PLEG in place of ours: pods start, probe Ready, crash-loop and go', { timeout: 420_000 }, () => {
  let node: ComposeNode;
  const t0 = Date.now();
  const took = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
  const pods = async () => ((await (await fetch(`http://127.0.0.1:${node.readPort}/pods`)).json()) as V1PodList).items;
  const pod = async (name: string) => (await pods()).find((p) => p.metadata?.name === `${name}-${NODE}`);
  const main = async (name: string): Promise<V1ContainerStatus | undefined> => (await pod(name))?.status?.containerStatuses?.find((c) => c.name === 'main');

  before(async () => {
    node = new ComposeNode({
      project: 'ks-compose-pleg-go',
      node: NODE,
      imageTag: process.env['KS_COMPOSE_IMAGE_TAG'] ?? 'ks-compose-test',
      runtimeSocket: laneEnv('KS_RUNTIME_ADDRESS'),
      runtimeRoot: laneEnv('KS_COMPOSE_RUNTIME_ROOT'),
      settings: { COMPOSE_FILE: `${join(REPO_ROOT, 'docker-compose.yml')}:${join(REPO_ROOT, 'deploy', 'compose', 'pleg-go.yml')}` },
    });
    await node.start();
    process.stdout.write(`# compose node ${NODE} with the Go PLEG healthy after ${took()}\n`);
  });

  after(async () => {
    await node?.stop();
  });

  it('the pleg container runs the Go binary, and it leads', async () => {
    const pleg = (await node.containers()).find((c) => c.service === 'pleg');
    assert.ok(pleg, 'a pleg container');
    const inspect = JSON.parse(await node.docker(['inspect', pleg.id])) as { Config: { Image: string; Entrypoint: string[] } }[];
    assert.match(inspect[0]?.Config.Image ?? '', /^kubelet-split\/pleg-go:/);
    assert.deepEqual(inspect[0]?.Config.Entrypoint, ['/usr/local/bin/pleg-go']);
    const info = await waitFor('pleg /info saying it leads', async () => {
      const i = (await (await fetch(`http://127.0.0.1:${node.settings['KS_PORT_PLEG'] ?? ''}/info`)).json()) as { implementation?: string; leadership?: { role?: string } };
      return i.leadership?.role === 'leader' ? i : undefined;
    }, 60_000);
    assert.equal(info.implementation, 'pleg-go');
  });

  it('a pod with a readiness probe becomes Running and Ready in /pods', async () => {
    writeFileSync(join(node.dir, 'manifests', 'ready.yaml'), manifest('ready', `    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "touch /tmp/ready; exec sleep 3600"]\n      readinessProbe:\n        exec: { command: ["cat", "/tmp/ready"] }\n        periodSeconds: 1\n`));
    const c = await waitFor('ready: main running and ready', async () => ((s) => (s?.state?.running && s.ready ? s : undefined))(await main('ready')), 120_000);
    assert.equal(c.restartCount, 0);
    process.stdout.write(`# ready Running and Ready after ${took()}\n`);
  });

  it('a container that keeps exiting is restarted: restartCount grows, CrashLoopBackOff between the restarts', async () => {
    writeFileSync(join(node.dir, 'manifests', 'crash.yaml'), manifest('crash', `    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "sleep 1; exit 3"]\n`));
    const seen = new Set<string>();
    const c = await waitFor('crash: restartCount 2 or more, waiting in CrashLoopBackOff', async () => {
      const s = await main('crash');
      if (s?.state?.waiting?.reason) seen.add(s.state.waiting.reason);
      return s && s.restartCount >= 2 && s.state?.waiting?.reason === 'CrashLoopBackOff' ? s : undefined;
    }, 180_000);
    assert.equal(c.lastState?.terminated?.exitCode, 3);
    process.stdout.write(`# crash: restartCount ${c.restartCount}, waiting reasons seen: ${[...seen].join(', ')}, after ${took()}\n`);
  });

  it('a pod whose manifest is removed is gone from /pods', async () => {
    for (const name of ['ready', 'crash']) rmSync(join(node.dir, 'manifests', `${name}.yaml`));
    await waitFor('both pods gone from /pods', async () => ((await pod('ready')) === undefined && (await pod('crash')) === undefined ? true : undefined), 120_000);
    process.stdout.write(`# both pods gone after ${took()}\n`);
  });
});
