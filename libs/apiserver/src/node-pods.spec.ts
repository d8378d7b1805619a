/** The API side's adapters: the node's pods from a list + watch, and the apiserver from KUBECONFIG. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from './api-server.js';
import type { RequestInit, WatchEvent } from './api-server.js';
import type { ListWatchClient } from './reflector.js';
import { FakeClock } from '@app/clock/testing';
import { ConfigError } from '@app/config';
import type { Pod } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { connectApiServer } from './connect.js';
import { ReflectorApiPods } from './node-pods.js';

const pod = (name: string, uid: string, rv: string): Pod => ({ metadata: { name, namespace: 'default', uid, resourceVersion: rv }, spec: { containers: [], nodeName: 'node-a' } });

/** An apiserver that answers one list, then streams the events the test pushes. */
class OneListClient implements ListWatchClient {
  readonly paths: string[] = [];
  emit?: (e: WatchEvent<Pod>) => void;
  constructor(private readonly items: Pod[] | undefined) {}
  request<T>(path: string, init?: RequestInit): Promise<T> {
    this.paths.push(`${path}?${new URLSearchParams(init?.query as Record<string, string>).toString()}`);
    if (!this.items) return Promise.reject(new ApiError(0, 'ConnectionFailed', 'connection refused'));
    return Promise.resolve({ metadata: { resourceVersion: '10' }, items: this.items } as T);
  }
  watch<T>(_path: string, _query: RequestInit['query'], onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    this.emit = onEvent as (e: WatchEvent<Pod>) => void;
    return new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
  }
}

describe('ReflectorApiPods', () => {
  it('lists the pods bound to the node, then follows the watch; lookups by name and UID; listeners hear each change', async () => {
    const clock = new FakeClock();
    const client = new OneListClient([pod('a', 'u-a', '9')]);
    const pods = new ReflectorApiPods(client, clock, silentLogger(), 'node-a');
    const heard: string[][] = [];
    const unsubscribe = pods.subscribe((all) => heard.push(all.map((p) => p.metadata.name ?? '')));
    assert.equal(pods.hasSynced, false);
    assert.equal(pods.get('default', 'a'), undefined);
    pods.start();
    await clock.step(10);
    assert.deepEqual(client.paths, ['/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a']);
    assert.equal(pods.hasSynced, true);
    assert.equal(pods.get('default', 'a')?.metadata.uid, 'u-a');
    assert.equal(pods.byUid('u-a')?.metadata.name, 'a');

    client.emit?.({ type: 'ADDED', object: pod('b', 'u-b', '11') });
    client.emit?.({ type: 'DELETED', object: pod('a', 'u-a', '12') });
    assert.equal(pods.get('default', 'a'), undefined);
    assert.equal(pods.byUid('u-a'), undefined);
    assert.deepEqual(pods.all().map((p) => p.metadata.name), ['b']);
    assert.deepEqual(heard, [['a'], ['a', 'b'], ['b']]);

    unsubscribe();
    client.emit?.({ type: 'ADDED', object: pod('c', 'u-c', '13') });
    assert.equal(heard.length, 3);
    pods.stop();
  });

  it('an apiserver that does not answer: not synced, no pods', async () => {
    const clock = new FakeClock();
    const pods = new ReflectorApiPods(new OneListClient(undefined), clock, silentLogger(), 'node-a');
    pods.start();
    await clock.step(5000);
    assert.equal(pods.hasSynced, false);
    assert.deepEqual(pods.all(), []);
    pods.stop();
  });
});

describe('connectApiServer', () => {
  it('no KUBECONFIG: no apiserver (a standalone node)', async () => {
    assert.equal(await connectApiServer(undefined, 'status-manager'), null);
    assert.equal(await connectApiServer('', 'status-manager'), null);
  });

  it('a kubeconfig it cannot use is a configuration error naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-kubeconfig-'));
    const missing = join(dir, 'missing.yaml');
    await assert.rejects(connectApiServer(missing, 'status-manager'), (err: unknown) => err instanceof ConfigError && err.message.includes(missing));
    const noCluster = join(dir, 'no-cluster.yaml');
    writeFileSync(noCluster, 'apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n');
    await assert.rejects(connectApiServer(noCluster, 'status-manager'), (err: unknown) => err instanceof ConfigError && /no current cluster/.test(err.message));
  });

  it('a good kubeconfig: the apiserver it names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-kubeconfig-'));
    const file = join(dir, 'kubeconfig.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443/", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const api = await connectApiServer(file, 'status-manager');
    assert.equal(api?.server, 'https://127.0.0.1:6443');
    assert.equal(api.userAgent, 'kubelet-split/status-manager');
  });
});
