/**
 * The README keeps its two set-up commands and links only pages that exist;
 * the configuration table (docs/configuration.md, linked from the README)
 * names every variable that some service reads, and no other; the README's
 * subject table names every subject family of @app/contracts, once, with a
 * subject of that family.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Subjects } from '@app/contracts';
import { classifySubject } from '@app/nats';
import { SERVICE_NAMES, serviceSchema } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { SERVICE_CONFIG_SCHEMAS } from './support/config-schemas.js';

const schemas = SERVICE_CONFIG_SCHEMAS;
const CONFIGURATION = join('docs', 'configuration.md');

describe('README', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

  it('has the two set-up commands: the stack with the example pods, and the tests', () => {
    assert.match(readme, /^bash deploy\/up\.sh$/m);
    assert.match(readme, /^bash deploy\/install\.sh && npm ci && npm test$/m);
  });

  it('links pages that exist, the configuration among them', () => {
    const links = [...readme.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/.test(l));
    assert.ok(links.includes(CONFIGURATION), `the README links ${CONFIGURATION}`);
    assert.deepEqual(links.filter((l) => !existsSync(join(REPO_ROOT, l))), [], 'linked but missing');
  });
});

describe('configuration table (docs/configuration.md)', () => {
  const table = readFileSync(join(REPO_ROOT, CONFIGURATION), 'utf8');

  it('lists exactly the variables the services read', () => {
    const documented = new Set([...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    const read = new Set(SERVICE_NAMES.flatMap((service) => Object.keys(serviceSchema({ service, schema: schemas[service] }))));
    assert.deepEqual([...read].filter((v) => !documented.has(v)), [], 'read but not documented');
    assert.deepEqual([...documented].filter((v) => v && !read.has(v)), [], 'documented but not read');
  });

  it('names, for each variable, exactly the services that read it, each in one row', () => {
    // A variable may have a row per meaning (SYNC_FREQUENCY in sync-loop and in pod-worker), but a service is in one of them.
    const listed = new Map<string, string[]>();
    for (const m of table.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)) {
      const services = (m[2] ?? '').trim();
      listed.set(m[1] ?? '', [...(listed.get(m[1] ?? '') ?? []), ...(services === 'all' ? SERVICE_NAMES : services.split(/,\s*/))]);
    }
    const wrong: string[] = [];
    for (const [name, services] of listed) {
      const readers = SERVICE_NAMES.filter((service) => name in serviceSchema({ service, schema: schemas[service] }));
      if ([...services].sort().join(',') !== [...readers].sort().join(',')) wrong.push(`${name}: docs/configuration.md rows say ${services.join(', ')}; read by ${readers.join(', ')}`);
    }
    assert.deepEqual(wrong, []);
  });
});

describe('README subject table', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('| kubelet channel / call | family | subject | from -> to |');
  const table = readme.slice(start, readme.indexOf('\n\n', start));
  const rows = [...table.matchAll(/^\| [^|]+ \| `([A-Za-z]+)` \| `([^`]+)` \| [^|]+ \|$/gm)].map((m) => ({ family: m[1] ?? '', subject: m[2] ?? '' }));

  it('lists every family of Subjects, once', () => {
    assert.ok(start >= 0, 'the table is there');
    assert.deepEqual(rows.map((r) => r.family).sort(), Object.keys(Subjects).sort());
  });

  it("gives each family a subject of that family (the topology's classification of it, placeholders as wildcards)", () => {
    for (const r of rows) assert.equal(classifySubject(r.subject.replace(/<[^>]+>/g, '*')), r.family, `${r.family}: ${r.subject}`);
  });
});
