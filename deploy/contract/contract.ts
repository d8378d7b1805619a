/**
 * `npm run contract`: writes the node's published contract, the AsyncAPI 3
 * document generated from libs/contracts (@app/contract-doc), to
 * docs/contract/asyncapi.yaml. `npm run contract -- --check` writes nothing
 * and exits 1, naming what differs, when the checked-in file is not what the
 * code generates (the test command checks the same: test/contract.spec.ts).
 *
 *   node dist/deploy/contract/contract.js [--check] [--out FILE]
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { asyncApiDocument, contractDifferences, renderAsyncApi } from '@app/contract-doc';
import { readContractDocs } from './doc-comments.js';

/** The repository's root, from dist/deploy/contract or deploy/contract. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes('/dist/') ? '../../..' : '../..');
/** Where the document is checked in. */
export const CONTRACT_FILE = join(REPO_ROOT, 'docs', 'contract', 'asyncapi.yaml');

/** The document as the code (and its doc comments) generates it now. */
export function generatedContract(): string {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  return renderAsyncApi(asyncApiDocument({ version }, readContractDocs(REPO_ROOT)));
}

/** Why `file` is not the generated document (undefined: it is): each difference named, and what to run. */
export function outOfDate(file: string, generated: string): string | undefined {
  const name = relative(REPO_ROOT, file);
  if (!existsSync(file)) return `${name} is missing: run npm run contract`;
  const checkedIn = readFileSync(file, 'utf8');
  if (checkedIn === generated) return undefined;
  const differences = contractDifferences(parse(checkedIn), parse(generated));
  const list = differences.length > 0 ? differences : ['its text (formatting or key order)'];
  const shown = list.slice(0, 20).map((d) => `  ${d}`);
  if (list.length > shown.length) shown.push(`  ... and ${list.length - shown.length} more`);
  return [`${name} is out of date: run npm run contract`, 'what differs:', ...shown].join('\n');
}

function main(): void {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, out: { type: 'string' } } });
  const file = values.out ? resolve(values.out) : CONTRACT_FILE;
  const text = generatedContract();
  if (values.check) {
    const problem = outOfDate(file, text);
    if (problem) {
      process.stderr.write(`${problem}\n`);
      process.exit(1);
    }
    process.stdout.write(`${relative(REPO_ROOT, file)} is up to date\n`);
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(`wrote ${relative(REPO_ROOT, file)} (${text.split('\n').length - 1} lines)\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
