/** The Go PLEG (contrib/pleg-go) for the tests: built by its build.sh, or taken from its cache. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../deploy/local/stack.js';

/** contrib/pleg-go/build.sh: the binary's path is its last line. */
export function buildPlegGo(): string {
  const out = execFileSync('bash', [join(REPO_ROOT, 'contrib/pleg-go/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
  const bin = out.trim().split('\n').at(-1) ?? '';
  if (!existsSync(bin)) throw new Error(`contrib/pleg-go/build.sh printed ${bin}, which does not exist`);
  return bin;
}
