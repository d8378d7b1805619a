import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsLogFiles } from './fs-log-files.js';

describe('FsLogFiles on the real file system', () => {
  it('an open log keeps reading the renamed file, and sees the new one at its path', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-logfiles-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const files = new FsLogFiles();
    const path = join(dir, '0.log');
    assert.equal(await files.open(path), undefined, 'no file yet');
    appendFileSync(path, 'one\n');
    const file = await files.open(path);
    assert.ok(file);
    assert.equal((await file.read(0)).toString(), 'one\n');
    // Rotation: renamed away, written once more through the old descriptor's inode, then a new file.
    renameSync(path, `${path}.20260101-000000`);
    appendFileSync(`${path}.20260101-000000`, 'two\n');
    assert.equal(await file.replaced(), false, 'renamed, not yet replaced');
    const changed = files.changed(path, AbortSignal.timeout(5000));
    appendFileSync(path, 'three\n');
    await changed;
    assert.equal(await file.replaced(), true);
    assert.equal((await file.read(4)).toString(), 'two\n');
    await file.close();
    const next = await files.open(path);
    assert.equal((await next?.read(0))?.toString(), 'three\n');
    await next?.close();
  });
});
