import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { extractFieldPathAsString, formatMap, isObjectFieldPath } from './fieldpath.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'prod', uid: 'u-1', labels: { b: '2', a: '1' }, annotations: { 'x/y': 'q"z' } },
  spec: { containers: [] },
};

describe('fieldpath.ExtractFieldPathAsString', () => {
  const cases: [string, string][] = [
    ['metadata.name', 'web'],
    ['metadata.namespace', 'prod'],
    ['metadata.uid', 'u-1'],
    ['metadata.labels', 'a="1"\nb="2"'],
    ['metadata.annotations', 'x/y="q\\"z"'],
    ["metadata.labels['a']", '1'],
    ["metadata.labels['none']", ''],
    ["metadata.annotations['x/y']", 'q"z'],
  ];
  for (const [path, want] of cases) it(path, () => assert.equal(extractFieldPathAsString(pod, path), want));
  it('any other path is refused by name', () => {
    assert.throws(() => extractFieldPathAsString(pod, 'status.podIP'), /unsupported fieldPath: status\.podIP/);
    assert.equal(isObjectFieldPath('status.podIP'), false);
    assert.equal(isObjectFieldPath("metadata.labels['a']"), true);
  });
  it('formatMap of nothing is empty', () => assert.equal(formatMap(undefined), ''));
});
