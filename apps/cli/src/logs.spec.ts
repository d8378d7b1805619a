import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseContainer, logsQuery, parseGoDuration } from './logs.js';
import { pod } from './testing.js';

describe('kubelet-split logs: which container', () => {
  const two = pod({ spec: { containers: [{ name: 'app', image: 'b' }, { name: 'side', image: 'b' }], initContainers: [{ name: 'setup', image: 'b' }] } });
  const cases = [
    { name: 'the only container without -c', pod: pod(), c: undefined, want: 'app' },
    { name: '-c names one', pod: two, c: 'side', want: 'side' },
    { name: '-c names an init container', pod: two, c: 'setup', want: 'setup' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(chooseContainer(tc.pod, tc.c), tc.want));
  it('several and no -c: kubectl\'s error naming the choices', () => {
    assert.throws(() => chooseContainer(two, undefined), { message: 'a container name must be specified for pod web-node1, choose one of: [app side] or one of the init containers: [setup]' });
    const noInit = pod({ spec: { containers: [{ name: 'a', image: 'b' }, { name: 'b', image: 'b' }] } });
    assert.throws(() => chooseContainer(noInit, undefined), { message: 'a container name must be specified for pod web-node1, choose one of: [a b]' });
  });
  it('a name not in the pod: the apiserver\'s error', () => assert.throws(() => chooseContainer(pod(), 'nope'), { message: 'container nope is not valid for pod web-node1' }));
});

describe('kubelet-split logs: the query', () => {
  const base = { follow: false, previous: false, timestamps: false, tail: -1 };
  const cases = [
    { name: 'nothing', flags: base, want: '' },
    { name: '-f --previous --timestamps --tail 5', flags: { ...base, follow: true, previous: true, timestamps: true, tail: 5 }, want: '?follow=true&previous=true&timestamps=true&tailLines=5' },
    { name: '--since 1m30s', flags: { ...base, since: '1m30s' }, want: '?sinceSeconds=90' },
    { name: '--since 500ms rounds up', flags: { ...base, since: '500ms' }, want: '?sinceSeconds=1' },
    { name: '--limit-bytes', flags: { ...base, limitBytes: 10 }, want: '?limitBytes=10' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(logsQuery(tc.flags), tc.want));
  it('refuses a bad duration', () => assert.throws(() => parseGoDuration('5 minutes'), /invalid duration "5 minutes"/));
  it('refuses --since with --since-time', () => assert.throws(() => logsQuery({ ...base, since: '5s', sinceTime: '2026-01-01T00:00:00Z' })));
});
