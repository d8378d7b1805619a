import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { areaTable, countByArea, readGinkgoReport, sideBySide } from './report.js';

const spec = (hierarchy: string[], leaf: string, state: string, message?: string) => ({
  ContainerHierarchyTexts: hierarchy,
  LeafNodeText: leaf,
  LeafNodeType: 'It',
  State: state,
  RunTime: 12e9,
  ...(message ? { Failure: { Message: message } } : {}),
});

const report = JSON.stringify([
  {
    SpecReports: [
      { LeafNodeType: 'SynchronizedBeforeSuite', State: 'passed' },
      spec(['[sig-node] Pods'], 'should get a host IP [NodeConformance] [Conformance]', 'passed'),
      spec(['[sig-node] Pods'], 'should be updated [NodeConformance] [Conformance]', 'failed', 'Timed out after 60.000s.\nmore detail'),
      spec(['[sig-node] Pods'], 'should cap back-off at MaxContainerBackOff [Slow] [NodeConformance]', 'skipped'),
      spec(['[sig-storage] EmptyDir volumes'], 'should support (root,0644,tmpfs) [LinuxOnly] [NodeConformance] [Conformance]', 'timedout', 'spec timeout'),
      spec(['[sig-node] Probing container'], 'should be restarted [NodeConformance]', 'skipped', 'Only supported for providers [gce]'),
      spec(['[sig-apps] Deployment'], 'should run a deployment [Conformance]', 'skipped'),
      spec(['[sig-node] Pods'], 'should be panicky [NodeConformance]', 'panicked', 'boom'),
    ],
  },
]);

describe('the conformance report', () => {
  it('keeps only the specs the focus selects and the skip does not, a spec outside the focus is not a skip', () => {
    const results = readGinkgoReport(report, /\[NodeConformance\]/, /\[Slow\]/);
    assert.deepEqual(
      results.map((r) => [r.area, r.outcome]),
      [
        ['[sig-node] Pods', 'failed'],
        ['[sig-node] Pods', 'failed'],
        ['[sig-node] Pods', 'passed'],
        ['[sig-node] Probing container', 'skipped'],
        ['[sig-storage] EmptyDir volumes', 'failed'],
      ],
    );
  });

  it('counts a timeout or a panic as a failure, with its first line', () => {
    const results = readGinkgoReport(report, /\[NodeConformance\]/);
    const byName = new Map(results.map((r) => [r.name, r]));
    assert.equal(byName.get('[sig-storage] EmptyDir volumes should support (root,0644,tmpfs) [LinuxOnly] [NodeConformance] [Conformance]')?.outcome, 'failed');
    assert.equal(byName.get('[sig-node] Pods should be updated [NodeConformance] [Conformance]')?.message, 'Timed out after 60.000s.');
    assert.equal(byName.get('[sig-node] Pods should cap back-off at MaxContainerBackOff [Slow] [NodeConformance]')?.outcome, 'skipped');
  });

  it('prints the table by area, largest first, with the totals and the failures', () => {
    const results = readGinkgoReport(report, /\[NodeConformance\]/, /\[Slow\]/);
    assert.deepEqual(countByArea(results)[0], { area: '[sig-node] Pods', passed: 1, failed: 2, skipped: 0 });
    const { table, failures } = areaTable(results, 'kubelet-split');
    assert.match(table, /^\| area \| kubelet-split: passed \| failed \| skipped \|$/m);
    assert.match(table, /^\| \[sig-node\] Pods \| 1 \| 2 \| 0 \|$/m);
    assert.match(table, /^\| \*\*all 5\*\* \| \*\*1\*\* \| \*\*3\*\* \| \*\*1\*\* \|$/m);
    assert.match(failures, /^- \[sig-node\] Pods should be updated \[NodeConformance\] \[Conformance\] \(failed, 12 s\): Timed out after 60.000s.$/m);
  });

  it('says so when the report is not ginkgo\'s', () => {
    assert.throws(() => readGinkgoReport('<testsuites/>', /x/), /the ginkgo report is not JSON/);
    assert.throws(() => readGinkgoReport('{}', /x/), /not a list of suite reports/);
  });
});

describe('two runs side by side', () => {
  const run = (states: Record<string, string>) =>
    readGinkgoReport(JSON.stringify([{ SpecReports: Object.entries(states).map(([leaf, state]) => spec(['[sig-node] Pods'], `${leaf} [NodeConformance]`, state, state === 'failed' ? 'boom' : undefined)) }]), /\[NodeConformance\]/);

  it('counts each area for both, and names the specs whose outcome differs and those both fail', () => {
    const split = run({ a: 'passed', b: 'failed', c: 'failed' });
    const upstream = run({ a: 'passed', b: 'passed', c: 'failed', d: 'passed' });
    const text = sideBySide({ agent: 'kubelet-split', results: split }, { agent: 'upstream', results: upstream });
    assert.match(text, /^\| \[sig-node\] Pods \| 1 \/ 2 \| 3 \/ 1 \|$/m);
    assert.match(text, /^\| \*\*all\*\* \(3 \/ 4 specs\) \| \*\*1 \/ 2\*\* \| \*\*3 \/ 1\*\* \|$/m);
    assert.match(text, /^- \[sig-node\] Pods b \[NodeConformance\]: kubelet-split failed, upstream passed \(boom\)$/m);
    assert.match(text, /^- \[sig-node\] Pods d \[NodeConformance\]: kubelet-split not run, upstream passed$/m);
    assert.match(text, /Failed on both:\n- \[sig-node\] Pods c \[NodeConformance\]: boom/);
  });

  it('says when both agree on every spec', () => {
    const same = run({ a: 'passed' });
    assert.match(sideBySide({ agent: 'x', results: same }, { agent: 'y', results: same }), /Every spec has the same outcome on both\.\n\nNo spec failed on both\./);
  });
});
