/**
 * `kubelet-split topology` on the real stack: NATS monitoring of a running
 * node (asked over NATS as the admin user: there is no monitoring port)
 * lists all seven services, each subscribed to the subjects the design's
 * subject table (DESIGN.md, libs/contracts Subjects, libs/nats NATS_ACCESS)
 * gives it and to nothing else; a subscription to an undocumented subject is
 * reported as such.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { SERVICE_NAMES, type ServiceName } from '@app/contracts';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NATS_ACCESS, type Topology } from '@app/nats';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'topo-e2e';

/** DESIGN.md's subject table, the "to" side: what each service must be subscribed to (or answer). */
const DESIGN_SUBSCRIBES: Record<ServiceName, readonly string[]> = {
  'config-source': ['sourcesSnapshot', 'apiObject', 'serviceAccountToken', 'serviceList'],
  'sync-loop': ['podUpdate', 'pleg', 'probeResult', 'workDone', 'podResync'],
  'pod-worker': ['work'],
  pleg: ['criEvents', 'plegInspect'],
  prober: ['prober'],
  'status-manager': ['status', 'probeResult', 'events', 'podEvents'],
  'kubelet-server': [],
  'node-status': ['nodeConditions'],
  console: ['events'],
  'cri-gateway': ['criRuntime', 'criImage', 'criEventsStatus'],
};
/** Not message families of the table: every instance's `info` and own commands, and its reply inbox. */
const HOUSEKEEPING = new Set<string>(['serviceInfo', 'serviceCommand', 'inbox']);

describe('kubelet-split topology on the real stack', { timeout: 240_000 }, () => {
  const stack = new NodeStack({ node: NODE, services: [...SERVICE_NAMES] });
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js'), 'topology', '--nats', stack.nats.url, '--nats-password-file', stack.nats.credentials.passwordFile('admin'), '--node', NODE, ...args], { encoding: 'utf8', timeout: 30_000 });
  const topology = (): Topology => {
    const out = cli('-o', 'json', '--interval', '1s');
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout) as Topology;
  };

  before(async () => {
    await stack.start();
    stack.writeManifest(
      'probed',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: probed\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n      readinessProbe:\n        exec:\n          command: ["true"]\n        periodSeconds: 1\n`,
    );
    await stack.waitForPod('probed', 'Ready', (s) => s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true, 90_000);
  });
  after(() => stack.stop());

  it('lists all seven services, each subscribed to what the design gives it and to nothing undocumented', () => {
    const t = topology();
    assert.deepEqual([...new Set(t.instances.map((i) => i.service))], [...SERVICE_NAMES], 'every service, in the design order');
    assert.deepEqual(t.undocumented, [], 'no service subscribes to an undocumented subject');
    for (const service of SERVICE_NAMES) {
      const inst = t.instances.find((i) => i.service === service);
      assert.ok(inst, service);
      const families = new Set<string>(inst.subscribes.map((s) => s.family).filter((f) => !HOUSEKEEPING.has(f)));
      const allowed = new Set<string>([...NATS_ACCESS[service].subscribes, ...NATS_ACCESS[service].serves]);
      for (const f of families) assert.ok(allowed.has(f), `${service} subscribes to ${f}, which the design does not give it`);
      for (const f of DESIGN_SUBSCRIBES[service]) assert.ok(families.has(f), `${service} is not subscribed to ${f}: it has ${[...families].join(', ')}`);
      assert.ok(inst.inMsgs > 0 && inst.outMsgs >= 0, `${service} has message counts`);
    }
    const sync = t.instances.find((i) => i.service === 'sync-loop');
    assert.ok((sync?.subscribes.find((s) => s.family === 'podUpdate')?.msgs ?? 0) > 0, 'the config ops reached the sync loop');
    const gateway = t.instances.find((i) => i.service === 'cri-gateway');
    assert.ok((gateway?.inRate ?? 0) > 0, 'the CRI gateway answers calls every second (relist, probes)');
  });

  it('the table, Mermaid and Graphviz outputs carry the design\'s flows', () => {
    const table = cli('--interval', '0s');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`\\nsync-loop\\s+0\\s+subscribes\\s+podUpdate\\s+kubelet\\.${NODE}\\.config\\.\\*\\s+\\d+\\n`));
    assert.match(table.stdout, /\* derived from the design's subject table/);
    const mermaid = cli('-o', 'mermaid', '--interval', '0s');
    assert.equal(mermaid.status, 0, mermaid.stderr);
    for (const edge of ['config_source_0 -->|"podUpdate', 'sync_loop_0 -->|"work', 'pleg_0 -->|"pleg', 'pod_worker_0 -->|"status', 'prober_0 -->|"probeResult', 'cri_gateway_0 -->|"criEvents']) {
      assert.ok(mermaid.stdout.includes(edge), `${edge} in\n${mermaid.stdout}`);
    }
    const dot = cli('-o', 'dot', '--interval', '0s');
    assert.equal(dot.status, 0, dot.stderr);
    assert.match(dot.stdout, /"config-source#0" -> "sync-loop#0" \[label="podUpdate \(\d+\)"\];/);
  });

  it('a service instance subscribed to an undocumented subject is reported UNDOCUMENTED', async () => {
    const rogue = await connect({ servers: stack.nats.url, name: `prober@${NODE}#rogue`, ...stack.nats.auth() });
    try {
      rogue.subscribe(`kubelet.${NODE}.gossip.*`);
      await rogue.flush();
      const t = topology();
      assert.deepEqual(t.undocumented, [{ instance: `prober@${NODE}#rogue`, subject: `kubelet.${NODE}.gossip.*` }]);
      const table = cli('--interval', '0s');
      assert.match(table.stdout, new RegExp(`UNDOCUMENTED: prober@${NODE}#rogue subscribes to kubelet\\.${NODE}\\.gossip\\.\\*`));
    } finally {
      await rogue.close();
    }
  });
});
