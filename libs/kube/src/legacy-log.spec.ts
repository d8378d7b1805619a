import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containerIdOfLegacyLogSymlink, legacyLogSymlink } from './legacy-log.js';

describe('legacy container log symlinks (kuberuntime legacy.go)', () => {
  const id = 'a'.repeat(64);
  it('names the link <pod>_<namespace>_<container>-<id>.log in the directory', () => {
    assert.equal(legacyLogSymlink('/var/log/containers', id, 'app', 'web-1', 'default'), `/var/log/containers/web-1_default_app-${id}.log`);
  });
  it('cuts a name longer than 255 bytes, keeping the suffix, as ext4 would refuse it', () => {
    const link = legacyLogSymlink('/d', id, 'c'.repeat(63), 'p'.repeat(253), 'n'.repeat(63));
    const name = link.slice('/d/'.length);
    assert.equal(name.length, 255);
    assert.ok(name.endsWith('.log'));
  });
  it('reads the container ID back from a link\'s name, and nothing from a name that is not one', () => {
    assert.equal(containerIdOfLegacyLogSymlink(`web-1_default_app-${id}.log`), id);
    assert.equal(containerIdOfLegacyLogSymlink('web-1_default_app-abc.log'), undefined);
    assert.equal(containerIdOfLegacyLogSymlink(`web-1_default_app-${id}.txt`), undefined);
    assert.equal(containerIdOfLegacyLogSymlink('nodash.log'), undefined);
  });
});
