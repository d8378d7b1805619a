/**
 * The README's configuration table names every variable that some service
 * reads, and no other; its subject table names every subject family of
 * @app/contracts, once, with a subject of that family.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Subjects } from '@app/contracts';
import { classifySubject } from '@app/nats';
import { SERVICE_NAMES, serviceSchema } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { SERVICE_CONFIG_SCHEMAS } from './support/config-schemas.js';

const schemas = SERVICE_CONFIG_SCHEMAS;

describe('README configuration table', () => {
  it('lists exactly the variables the services read', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'));
    const documented = new Set([...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    const read = new Set(SERVICE_NAMES.flatMap((service) => Object.keys(serviceSchema({ service, schema: schemas[service] }))));
    assert.deepEqual([...read].filter((v) => !documented.has(v)), [], 'read but not documented');
    assert.deepEqual([...documented].filter((v) => v && !read.has(v)), [], 'documented but not read');
  });

  it('names, for each variable, exactly the services that read it, each in one row', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration'));
    // A variable may have a row per meaning (SYNC_FREQUENCY in sync-loop and in pod-worker), but a service is in one of them.
    const listed = new Map<string, string[]>();
    for (const m of section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)) {
      const services = (m[2] ?? '').trim();
      listed.set(m[1] ?? '', [...(listed.get(m[1] ?? '') ?? []), ...(services === 'all' ? SERVICE_NAMES : services.split(/,\s*/))]);
    }
    const wrong: string[] = [];
    for (const [name, services] of listed) {
      const readers = SERVICE_NAMES.filter((service) => name in serviceSchema({ service, schema: schemas[service] }));
      if ([...services].sort().join(',') !== [...readers].sort().join(',')) wrong.push(`${name}: README rows say ${services.join(', ')}; read by ${readers.join(', ')}`);
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
