import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareProfiles, differenceTable, shape, type RuntimeProfile } from './profile.js';

describe('runtime profile: the shape of a CRI response', () => {
  it('says which fields are set, lists by their first element, and keeps the values that matter', () => {
    const res = { image: { id: 'sha256:1', repoTags: ['pause:3.10'], repoDigests: [], size: 0, pinned: true, spec: { annotations: {} } }, info: { info: '{"pid":12,"config":{}}', plain: 'x' } };
    assert.deepEqual(shape(res), {
      'image.id': 'set',
      'image.repoTags[]': 'set',
      'image.repoDigests': 'unset',
      'image.size': 'unset',
      'image.pinned': '= true',
      'image.spec.annotations{}': 'unset',
      'info{}': 'info, plain',
      'info{info}': 'config, pid',
    });
  });

  it('counts a bigint of zero and an empty byte array as unset', () => {
    assert.deepEqual(shape({ createdAt: 0n, startedAt: 5n, stdout: Buffer.alloc(0), stderr: Buffer.from('e') }), { createdAt: 'unset', startedAt: 'set', stdout: 'unset', stderr: 'set' });
  });
});

describe('runtime profile: two runtimes compared', () => {
  const a: RuntimeProfile = {
    kind: 'containerd2',
    version: 'v2.4.2',
    probes: {
      'ImageStatus verbose': { ok: true, fields: { 'image.pinned': '= true', 'info{}': 'info' } },
      GetContainerEvents: { ok: true, fields: { containerEventType: '= "CONTAINER_STARTED_EVENT"' } },
      'ContainerStatus of an unknown id': { ok: false, code: 'NotFound', message: 'x' },
      Version: { ok: true, fields: { runtimeName: 'set' } },
    },
  };
  const b: RuntimeProfile = {
    kind: 'containerd1.6',
    version: '1.6.20',
    probes: {
      'ImageStatus verbose': { ok: true, fields: { 'image.pinned': '= false', 'info{}': 'info', 'image.uid': 'unset' } },
      GetContainerEvents: { ok: false, code: 'Unimplemented', message: 'unknown method' },
      'ContainerStatus of an unknown id': { ok: false, code: 'NotFound', message: 'another text' },
      Version: { ok: true, fields: { runtimeName: 'set' } },
    },
  };

  it('names each field that differs, and an outcome that differs, and nothing that is the same', () => {
    assert.deepEqual(compareProfiles(a, b), [
      { probe: 'ImageStatus verbose', field: 'image.pinned', a: '= true', b: '= false' },
      { probe: 'ImageStatus verbose', field: 'image.uid', a: 'absent', b: 'unset' },
      { probe: 'GetContainerEvents', field: '', a: 'answered', b: 'error Unimplemented' },
    ]);
  });

  it('makes a table with the runtimes as columns, and says when nothing differs', () => {
    const t = differenceTable(a, b);
    assert.match(t, /^\| probe \| field \| containerd2 v2\.4\.2 \| containerd1\.6 1\.6\.20 \|$/m);
    assert.match(t, /^\| GetContainerEvents \| outcome \| answered \| error Unimplemented \|$/m);
    assert.match(differenceTable(a, a), /^\| \(none\) \| \| \| \|$/m);
  });
});
