import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractPods, parseManifest } from './manifest.js';

const lines = (...l: string[]) => l.join('\n') + '\n';

describe('parseManifest', () => {
  const cases: {
    name: string;
    text: string;
    format: 'yaml' | 'json';
    /** The documents' indexes and values, when the text is readable. */
    want?: { index: number; value: unknown }[];
    /** A pattern the error must match, when it is not. */
    error?: RegExp;
  }[] = [
    {
      name: 'yaml: one document',
      text: lines('apiVersion: v1', 'kind: Pod', 'metadata:', '  name: web'),
      format: 'yaml',
      want: [{ index: 0, value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } } }],
    },
    {
      name: 'yaml: several documents separated by ---',
      text: lines('kind: Pod', 'metadata: {name: a}', '---', 'kind: Pod', 'metadata: {name: b}', '---', 'kind: Pod', 'metadata: {name: c}'),
      format: 'yaml',
      want: [
        { index: 0, value: { kind: 'Pod', metadata: { name: 'a' } } },
        { index: 1, value: { kind: 'Pod', metadata: { name: 'b' } } },
        { index: 2, value: { kind: 'Pod', metadata: { name: 'c' } } },
      ],
    },
    {
      name: 'yaml: empty documents are skipped, the others keep their position in the stream',
      text: lines('---', '# only a comment', '---', 'kind: Pod', '---', '---', 'kind: PodList', '---', '~'),
      format: 'yaml',
      want: [
        { index: 1, value: { kind: 'Pod' } },
        { index: 3, value: { kind: 'PodList' } },
      ],
    },
    { name: 'yaml: an empty file has no documents', text: '', format: 'yaml', want: [] },
    { name: 'yaml: a file of comments has no documents', text: lines('# nothing here', '# yet'), format: 'yaml', want: [] },
    {
      name: 'yaml: a top-level list is one document',
      text: lines('- kind: Pod', '- kind: Pod'),
      format: 'yaml',
      want: [{ index: 0, value: [{ kind: 'Pod' }, { kind: 'Pod' }] }],
    },
    {
      name: 'yaml: a syntax error names its line',
      text: lines('a: 1', 'b:', '  c: 1', ' d: 2'),
      format: 'yaml',
      error: /^YAML syntax error at line 4: All mapping items must start at the same column$/,
    },
    {
      name: 'yaml: a syntax error in the second document refuses every document, with the line in the file',
      text: lines('apiVersion: v1', 'kind: Pod', 'metadata:', '  name: a', '---', 'apiVersion: v1', 'kind: Pod', 'metadata:', '  name: b', ' labels: {}'),
      format: 'yaml',
      error: /^YAML syntax error at line 10: /,
    },
    {
      name: 'yaml: a duplicate key is an error',
      text: lines('kind: Pod', 'metadata:', '  name: x', '  name: y'),
      format: 'yaml',
      error: /^YAML syntax error at line 4: Map keys must be unique$/,
    },
    {
      name: 'yaml: tabs as indentation are an error',
      text: lines('kind: Pod', 'spec:', '\tcontainers: []'),
      format: 'yaml',
      error: /^YAML syntax error at line 3: Tabs are not allowed as indentation$/,
    },
    {
      name: 'yaml: an alias without its anchor is an error',
      text: lines('kind: Pod', '---', 'kind: Pod', 'metadata: *nowhere'),
      format: 'yaml',
      error: /^YAML error in the document at line 3: Unresolved alias/,
    },
    {
      name: 'json: one value',
      text: '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}',
      format: 'json',
      want: [{ index: 0, value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } } }],
    },
    { name: 'json: a list is one document', text: '[{"kind": "Pod"}]', format: 'json', want: [{ index: 0, value: [{ kind: 'Pod' }] }] },
    { name: 'json: blank text has no documents', text: ' \n', format: 'json', want: [] },
    {
      name: 'json: a syntax error names its line',
      text: lines('{', '  "kind": "Pod",', '  "metadata": {"name": "web",}', '}'),
      format: 'json',
      error: /^JSON syntax error at line 3: /,
    },
    { name: 'json: truncated text is an error at its last line', text: lines('{', '  "kind": "Pod",'), format: 'json', error: /^JSON syntax error at line 3: / },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = parseManifest(tc.text, tc.format);
      if (tc.error !== undefined) {
        assert.deepEqual(got.documents, []);
        assert.match(got.error ?? '<no error>', tc.error);
      } else {
        assert.equal(got.error, undefined);
        assert.deepEqual(got.documents, tc.want);
      }
    });
  }
});

describe('extractPods', () => {
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name } });
  const cases: { name: string; doc: unknown; want?: unknown[]; error?: string | RegExp }[] = [
    { name: 'a v1 Pod', doc: pod('a'), want: [pod('a')] },
    { name: 'a v1 PodList', doc: { apiVersion: 'v1', kind: 'PodList', items: [pod('a'), pod('b')] }, want: [pod('a'), pod('b')] },
    {
      name: 'a PodList whose items leave kind and apiVersion out',
      doc: { apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'a' } }] },
      want: [{ metadata: { name: 'a' } }],
    },
    { name: 'a PodList without items has no pods', doc: { apiVersion: 'v1', kind: 'PodList', metadata: {} }, want: [] },
    { name: 'a list of pods (what an http source may serve)', doc: [pod('a'), pod('b')], want: [pod('a'), pod('b')] },
    { name: 'an empty list has no pods', doc: [], want: [] },
    { name: 'another kind', doc: { apiVersion: 'apps/v1', kind: 'Deployment' }, error: 'kind "Deployment" is not a Pod or PodList (want apiVersion v1, kind Pod)' },
    { name: 'a v1 List is not a PodList', doc: { apiVersion: 'v1', kind: 'List', items: [pod('a')] }, error: 'kind "List" is not a Pod or PodList (want apiVersion v1, kind Pod)' },
    { name: 'a missing kind', doc: { apiVersion: 'v1', metadata: { name: 'a' } }, error: 'missing kind (want apiVersion v1, kind Pod)' },
    { name: 'a Pod of another apiVersion', doc: { apiVersion: 'apps/v1', kind: 'Pod' }, error: 'apiVersion "apps/v1" is not supported for kind Pod (want apiVersion v1)' },
    { name: 'a Pod without apiVersion', doc: { kind: 'Pod' }, error: 'a missing apiVersion is not supported for kind Pod (want apiVersion v1)' },
    { name: 'a PodList of another apiVersion', doc: { apiVersion: 'v2', kind: 'PodList', items: [] }, error: /apiVersion "v2" is not supported for kind PodList/ },
    { name: 'a PodList whose items are not a list', doc: { apiVersion: 'v1', kind: 'PodList', items: { a: 1 } }, error: 'PodList items must be a list, got an object' },
    { name: 'a PodList item of another kind', doc: { apiVersion: 'v1', kind: 'PodList', items: [pod('a'), { apiVersion: 'v1', kind: 'Service' }] }, error: /^items\[1\]: kind "Service"/ },
    { name: 'a PodList item that is not an object', doc: { apiVersion: 'v1', kind: 'PodList', items: ['a'] }, error: 'items[0]: expected a Pod object, got a string' },
    { name: 'a list holding another kind', doc: [pod('a'), { apiVersion: 'apps/v1', kind: 'Deployment' }], error: /^item 1: kind "Deployment" is not a Pod or PodList/ },
    { name: 'a list holding an object without kind', doc: [{ metadata: { name: 'a' } }], error: 'item 0: missing kind (want apiVersion v1, kind Pod)' },
    { name: 'a scalar', doc: 'hello', error: 'expected an object with apiVersion and kind, got a string' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = extractPods(tc.doc);
      if (tc.error === undefined) {
        assert.equal(got.error, undefined);
        assert.deepEqual(got.pods, tc.want);
      } else {
        assert.deepEqual(got.pods, []);
        if (typeof tc.error === 'string') assert.equal(got.error, tc.error);
        else assert.match(got.error ?? '<no error>', tc.error);
      }
    });
  }

  it('returns the pods as read, not copies that could drift from the document', () => {
    const doc = pod('a');
    assert.equal(extractPods(doc).pods[0], doc);
  });
});
