/**
 * The published contract is up to date: the AsyncAPI document the code
 * generates now (@app/contract-doc, through `npm run contract`'s own
 * functions) is the checked-in docs/contract/asyncapi.yaml, byte for byte.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { checkAsyncApi } from '@app/contract-doc';
import { CONTRACT_FILE, generatedContract, outOfDate } from '../deploy/contract/contract.js';

describe('docs/contract/asyncapi.yaml', () => {
  const generated = generatedContract();

  it('is what the code generates (else: run npm run contract)', () => {
    const problem = outOfDate(CONTRACT_FILE, generated);
    assert.equal(problem, undefined, problem);
  });

  it('is valid AsyncAPI 3 structure as checked in', () => {
    assert.deepEqual(checkAsyncApi(parse(generated)), []);
  });

  it('a stale file is named, with what differs and what to run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'contract-'));
    try {
      const stale = join(dir, 'asyncapi.yaml');
      writeFileSync(stale, generated.replace('address: kubelet.{node}.pleg.{uid}', 'address: kubelet.{node}.pleg.old.{uid}'));
      const problem = outOfDate(stale, generated) ?? '';
      assert.match(problem, /asyncapi\.yaml is out of date: run npm run contract/);
      assert.match(problem, /channels\.pleg: differs/);
      assert.match(outOfDate(join(dir, 'none.yaml'), generated) ?? '', /none\.yaml is missing: run npm run contract/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
