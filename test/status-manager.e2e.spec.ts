/**
 * The status manager on the real stack: `kubelet-split get pods` shows, in
 * its STATUS column, what kubectl would show for each scenario, `/pods`
 * parses as a v1 PodList with @kubernetes/client-node's own types, and
 * describe and the events read like kubectl's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { V1PodList } from '@kubernetes/client-node';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const pod = (name: string, spec: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n${spec}`;
const container = (name: string, command: string, extra = '') => `    - name: ${name}\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n${extra}`;

describe('status manager and kubelet-split get pods on the real stack', { timeout: 300_000 }, () => {
  const stack = new NodeStack({
    node: 'sm-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '2s', CRASHLOOP_BACKOFF_MAX: '20s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
  });
  let server = '';

  const cli = (...args: string[]) => spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js'), ...args, '--server', server], { encoding: 'utf8', timeout: 20_000 });
  /** STATUS by pod name, from the CLI's table. */
  const statusColumn = (): Map<string, string> => {
    const out = cli('get', 'pods');
    assert.equal(out.status, 0, out.stderr);
    const [header, ...rows] = out.stdout.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    return new Map(rows.map((r) => r.trim().split(/\s{2,}/)).map((cols) => [cols[0] ?? '', cols[2] ?? '']));
  };
  const waitForColumn = (name: string, want: RegExp, timeoutMs = 60_000) =>
    stack
      .waitFor(`${stack.podName(name)} STATUS ${String(want)}`, () => {
        const s = statusColumn().get(stack.podName(name));
        return s !== undefined && want.test(s) ? s : undefined;
      }, timeoutMs)
      .catch((err: unknown) => {
        const seen = stack.history.filter((h) => h.pod === stack.podName(name)).map((h) => `${h.verb}:${h.status.phase ?? ''}:${h.status.reason ?? ''}`);
        throw new Error(`${(err as Error).message}\nstatuses the pod worker sent: ${seen.join(' ')}`);
      });

  before(async () => {
    await stack.start();
    const sm = [...stack.procs.entries()].find(([k]) => k.startsWith('status-manager'))?.[1];
    server = `http://127.0.0.1:${sm?.port ?? 0}`;
    stack.writeManifest('running', pod('running', `  containers:\n${container('main', 'sleep 3600')}`));
    stack.writeManifest('crashing', pod('crashing', `  containers:\n${container('main', 'exit 1')}`));
    stack.writeManifest('initblocked', pod('initblocked', `  initContainers:\n${container('setup', 'exit 1')}  containers:\n${container('main', 'sleep 3600')}`));
    stack.writeManifest('sidecar', pod('sidecar', `  initContainers:\n${container('proxy', 'sleep 3600', '      restartPolicy: Always\n')}  containers:\n${container('main', 'sleep 3600')}`));
    stack.writeManifest('succeeded', pod('succeeded', `  restartPolicy: Never\n  containers:\n${container('main', 'exit 0')}`));
    stack.writeManifest('failed', pod('failed', `  restartPolicy: Never\n  containers:\n${container('main', 'exit 3')}`));
    stack.writeManifest('neverpull', pod('neverpull', `  containers:\n    - name: main\n      image: localhost/kubelet-split/absent:1\n      imagePullPolicy: Never\n`));
    stack.writeManifest('deadline', pod('deadline', `  activeDeadlineSeconds: 4\n  containers:\n${container('main', 'sleep 3600')}`));
    stack.writeManifest('toobig', pod('toobig', `  containers:\n${container('main', 'sleep 3600', '      resources:\n        requests:\n          cpu: "500"\n')}`));
  });
  after(() => stack.stop());

  const cases: { name: string; want: RegExp; why: string }[] = [
    { name: 'running', want: /^Running$/, why: 'a running container' },
    { name: 'crashing', want: /^CrashLoopBackOff$/, why: 'a container waiting in back-off' },
    { name: 'initblocked', want: /^Init:(CrashLoopBackOff|Error)$/, why: 'an init container that keeps failing' },
    { name: 'sidecar', want: /^Running$/, why: 'a sidecar beside the main container' },
    { name: 'succeeded', want: /^Completed$/, why: 'restartPolicy Never, exit 0' },
    { name: 'failed', want: /^Error$/, why: 'restartPolicy Never, exit 3' },
    { name: 'neverpull', want: /^ErrImageNeverPull$/, why: 'an absent image with pull policy Never' },
    { name: 'toobig', want: /^OutOfcpu$/, why: 'rejected by admission' },
  ];
  for (const tc of cases) {
    it(`STATUS ${String(tc.want)} for ${tc.why}`, async () => {
      await waitForColumn(tc.name, tc.want);
    });
  }

  it('STATUS DeadlineExceeded, then Error, for activeDeadlineSeconds: the pod Failed with reason DeadlineExceeded', async () => {
    // kubectl's STATUS is the pod's reason until a container's terminated reason replaces it: DeadlineExceeded while
    // the kill runs, Error (the killed container's) once it is done, which with a fast kill can come before any look.
    await waitForColumn('deadline', /^(DeadlineExceeded|Error)$/);
    const out = cli('get', 'pods', stack.podName('deadline'), '-o', 'json');
    assert.equal(out.status, 0, out.stderr);
    const { status } = JSON.parse(out.stdout) as { status: { phase?: string; reason?: string; message?: string } };
    assert.equal(status.phase, 'Failed');
    assert.equal(status.reason, 'DeadlineExceeded');
    assert.equal(status.message, 'Pod was active on the node longer than the specified deadline');
  });

  it('READY and RESTARTS read like kubectl\'s', async () => {
    await stack.waitFor('sidecar 2/2', () => {
      const row = cli('get', 'pods').stdout.split('\n').find((l) => l.startsWith(stack.podName('sidecar')));
      return row && /\s2\/2\s/.test(row) ? row : undefined;
    });
    // The crashing container runs for a moment at each restart (the PLEG's immediate inspection can
    // catch it: 1/1 Running then, as kubectl would show), and waits in back-off the rest of the time.
    // The wait ends on the whole row the assertion reads (READY and RESTARTS), not on READY alone: before the first
    // restart the row is 0/1 with no restart to show.
    const withRestarts = /\s0\/1\s+\S+\s+[1-9]\d* \(\d+s ago\)\s/;
    const crash = await stack.waitFor('crashing 0/1 with its restarts', () => {
      const row = cli('get', 'pods').stdout.split('\n').find((l) => l.startsWith(stack.podName('crashing')));
      return row && withRestarts.test(row) ? row : undefined;
    });
    assert.match(crash, withRestarts);
  });

  it('/pods parses as a v1 PodList with @kubernetes/client-node', async () => {
    const raw: unknown = await (await fetch(`${server}/pods`)).json();
    const list = ObjectSerializer.deserialize(raw, 'V1PodList', '') as V1PodList;
    assert.equal(list.kind, 'PodList');
    const running = list.items.find((p) => p.metadata?.name === stack.podName('running'));
    assert.ok(running?.status?.startTime instanceof Date);
    assert.equal(running?.status?.phase, 'Running');
    assert.equal(running?.spec?.containers[0]?.image, IMAGE);
    assert.equal(running?.status?.containerStatuses?.[0]?.ready, true);
    assert.equal(running?.status?.qosClass, 'BestEffort');
  });

  it('-o json, -o yaml and -o wide', () => {
    const json = cli('get', 'pods', 'running-sm-e2e', '-o', 'json');
    assert.equal(json.status, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { metadata: { name: string } }).metadata.name, stack.podName('running'));
    assert.match(cli('get', 'pods', '-o', 'yaml').stdout, /^apiVersion: v1\nkind: PodList/);
    assert.match(cli('get', 'pods', '-o', 'wide').stdout.split('\n')[0] ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    const bad = cli('get', 'pods', '-o', 'toml');
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /unknown output format "toml"/);
  });

  it('describe pod shows the containers, conditions and events in order', async () => {
    await waitForColumn('running', /^Running$/);
    const d = cli('describe', 'pod', stack.podName('running'));
    assert.equal(d.status, 0, d.stderr);
    for (const line of [/^Name:\s+running-sm-e2e$/m, /^Namespace:\s+default$/m, /^Status:\s+Running$/m, /^Containers:$/m, /^\s+State:\s+Running$/m, /^Conditions:$/m, /^Events:$/m, /Normal\s+Started\s+\S+\s+kubelet\s+Started container main/]) assert.match(d.stdout, line);
    const events = (await (await fetch(`${server}/pods/default/${stack.podName('running')}/events`)).json()) as { items: { reason: string; timestamp: string }[] };
    const reasons = events.items.map((e) => e.reason);
    assert.ok(reasons.indexOf('Created') < reasons.indexOf('Started'), reasons.join(','));
    const missing = cli('describe', 'pod', 'nope');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /not found/);
  });

  it('the status manager exports its kubelet metrics', async () => {
    const text = await (await fetch(`${server}/metrics`)).text();
    assert.match(text, /kubelet_desired_pods\{[^}]*static="true"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_running_pods\{[^}]*\} [1-9]/);
    assert.match(text, /kubelet_running_containers\{[^}]*container_state="running"[^}]*\} [1-9]/);
    assert.match(text, /kubelet_pod_status_sync_duration_seconds_count\{[^}]*\} [1-9]/);
  });

  it('AGE of a static pod is its first-seen time, kept across a config-source restart; an edit is a new pod, first seen then', async () => {
    const row = () => cli('get', 'pods').stdout.split('\n').find((l) => l.startsWith(stack.podName('running'))) ?? '';
    const age = () => row().trim().split(/\s{2,}/)[4] ?? '';
    assert.match(age(), /^\d+[smhd](\d+[smh])?$/, `AGE is a duration: ${row()}`);
    const created = (): { at?: string; labels?: Record<string, string> } => {
      const out = cli('get', 'pods', stack.podName('running'), '-o', 'json');
      assert.equal(out.status, 0, out.stderr);
      const p = JSON.parse(out.stdout) as { metadata: { creationTimestamp?: string; labels?: Record<string, string> } };
      return { ...(p.metadata.creationTimestamp ? { at: p.metadata.creationTimestamp } : {}), ...(p.metadata.labels ? { labels: p.metadata.labels } : {}) };
    };
    const before = created().at;
    assert.ok(before && Date.parse(before) <= Date.now(), `creationTimestamp ${String(before)}`);
    const [key, cs] = [...stack.procs.entries()].find(([k]) => k.startsWith('config-source')) ?? [];
    assert.ok(key && cs);
    await cs.stop();
    stack.procs.delete(key);
    await new Promise((r) => setTimeout(r, 1100));
    await stack.startService('config-source', '1');
    await new Promise((r) => setTimeout(r, 2500)); // two file checks of the restarted source
    assert.equal(created().at, before, 'the creationTimestamp did not reset');
    // An edit makes a new pod (a new UID, as the kubelet hashes the whole manifest): its first-seen time is the edit's.
    const editedAt = Date.now();
    stack.writeManifest('running', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: running\n  labels:\n    edited: "yes"\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n${container('main', 'sleep 3600')}`);
    const after = await stack.waitFor('the edit to reach get pods', () => {
      const c = created();
      return c.labels?.['edited'] === 'yes' ? c : undefined;
    }, 60_000);
    // RFC 3339 has whole seconds.
    assert.ok(Date.parse(after.at ?? '') >= Math.floor(editedAt / 1000) * 1000, `the new pod was first seen at the edit: ${String(after.at)} (edited at ${new Date(editedAt).toISOString()})`);
    assert.match(age(), /^\d+[smhd](\d+[smh])?$/);
  });

  it('statuses are versioned in the pod-status bucket and survive a status-manager restart', async () => {
    const [key, sm] = [...stack.procs.entries()].find(([k]) => k.startsWith('status-manager')) ?? [];
    assert.ok(key && sm);
    await sm.stop();
    stack.procs.delete(key);
    const again = await stack.startService('status-manager', '1');
    server = `http://127.0.0.1:${again.port}`;
    assert.equal(statusColumn().get(stack.podName('succeeded')), 'Completed', 'the status came back from KV');
  });
});
