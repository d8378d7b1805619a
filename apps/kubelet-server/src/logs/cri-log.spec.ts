import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ByteLimit, LogOptionsError, decodeCriLog, formatLine, parseCriLogEntry, parseLogOptions, selectLines, type LogLine } from './cri-log.js';

const T = '2026-01-01T00:00:0';

describe('parseCriLogEntry: the CRI log format', () => {
  const cases = [
    { name: 'a full stdout line', line: '2026-01-01T00:00:01.123456789Z stdout F hello world', want: { stream: 'stdout', partial: false, content: 'hello world', time: Date.UTC(2026, 0, 1, 0, 0, 1, 123) } },
    { name: 'a partial stderr line', line: '2026-01-01T00:00:01Z stderr P part', want: { stream: 'stderr', partial: true, content: 'part', time: Date.UTC(2026, 0, 1, 0, 0, 1) } },
    { name: 'an empty line', line: '2026-01-01T00:00:01Z stdout F', want: { stream: 'stdout', partial: false, content: '', time: Date.UTC(2026, 0, 1, 0, 0, 1) } },
    { name: 'content with spaces kept', line: '2026-01-01T00:00:01+01:00 stdout F  a  b ', want: { stream: 'stdout', partial: false, content: ' a  b ', time: Date.UTC(2026, 0, 1, 0, 0, 1) - 3600_000 } },
    { name: 'a bad time', line: 'yesterday stdout F x', want: undefined },
    { name: 'a bad stream', line: '2026-01-01T00:00:01Z stdin F x', want: undefined },
    { name: 'a bad tag', line: '2026-01-01T00:00:01Z stdout X x', want: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = parseCriLogEntry(tc.line);
      assert.deepEqual(got && { stream: got.stream, partial: got.partial, content: got.content, time: got.time }, tc.want);
    });
  }
});

describe('decodeCriLog', () => {
  it('serves partial entries as upstream writes them: no newline inside a line, the timestamp where it begins, per stream', () => {
    const text = `${T}1Z stdout P hel\n${T}1Z stderr F oops\n${T}2Z stdout P lo \n${T}3Z stdout F world\n`;
    const { lines, rest } = decodeCriLog(text);
    assert.deepEqual(lines.map((l) => [l.stream, l.content, l.newline, l.continuation]), [
      ['stdout', 'hel', false, false],
      ['stderr', 'oops', true, false],
      ['stdout', 'lo ', false, true],
      ['stdout', 'world', true, true],
    ]);
    assert.equal(lines.filter((l) => l.stream === 'stdout').map((l) => formatLine(l, false)).join(''), 'hello world\n');
    assert.equal(lines.filter((l) => l.stream === 'stdout').map((l) => formatLine(l, true)).join(''), `${T}1Z hello world\n`);
    assert.equal(rest, '');
  });
  it('serves the last output of a process that ended without a newline (a partial entry the file ends with)', () => {
    const { lines } = decodeCriLog(`${T}1Z stdout P pod-name\n${T}1Z stdout P value-1\n`);
    assert.equal(lines.map((l) => formatLine(l, false)).join(''), 'pod-namevalue-1');
  });
  it('keeps a line without its newline, and an open partial entry, for the next read', () => {
    const pending = new Map<string, LogLine>();
    const a = decodeCriLog(`${T}1Z stdout P ab\n${T}1Z stdout F c`, pending);
    assert.deepEqual(a.lines.map((l) => formatLine(l, false)), ['ab']);
    const b = decodeCriLog(`${a.rest}d\n`, pending);
    assert.deepEqual(b.lines.map((l) => [l.content, l.continuation]), [['cd', true]]);
  });
  it('skips lines not in the format', () => {
    assert.deepEqual(decodeCriLog(`garbage\n${T}1Z stdout F ok\n`).lines.map((l) => l.content), ['ok']);
  });
});

describe('selectLines: sinceSeconds/sinceTime, then tailLines', () => {
  const lines = decodeCriLog(['1', '2', '3', '4', '5'].map((s) => `${T}${s}Z stdout F line${s}\n`).join('')).lines;
  const cases = [
    { name: 'everything', opts: {}, want: ['line1', 'line2', 'line3', 'line4', 'line5'] },
    { name: 'tailLines 2', opts: { tailLines: 2 }, want: ['line4', 'line5'] },
    { name: 'tailLines 0', opts: { tailLines: 0 }, want: [] },
    { name: 'tailLines beyond the file', opts: { tailLines: 50 }, want: ['line1', 'line2', 'line3', 'line4', 'line5'] },
    { name: 'since the 3rd second', opts: { since: Date.UTC(2026, 0, 1, 0, 0, 3) }, want: ['line3', 'line4', 'line5'] },
    { name: 'since, then the last one', opts: { since: Date.UTC(2026, 0, 1, 0, 0, 3), tailLines: 1 }, want: ['line5'] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(selectLines(lines, tc.opts).map((l) => l.content), tc.want));
});

describe('parseLogOptions: the query as PodLogOptions', () => {
  const now = Date.UTC(2026, 0, 1, 0, 1, 0);
  const cases = [
    { name: 'none', q: {}, want: { follow: false, previous: false, timestamps: false } },
    { name: 'every flag', q: { follow: 'true', previous: '1', timestamps: 'true', tailLines: '10', limitBytes: '100' }, want: { follow: true, previous: true, timestamps: true, tailLines: 10, limitBytes: 100 } },
    { name: 'sinceSeconds from now', q: { sinceSeconds: '30' }, want: { follow: false, previous: false, timestamps: false, since: now - 30_000 } },
    { name: 'sinceTime', q: { sinceTime: '2026-01-01T00:00:10Z' }, want: { follow: false, previous: false, timestamps: false, since: Date.UTC(2026, 0, 1, 0, 0, 10) } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(parseLogOptions(tc.q, now), tc.want));
  const bad = [
    { name: 'a negative tailLines', q: { tailLines: '-1' } },
    { name: 'a zero limitBytes', q: { limitBytes: '0' } },
    { name: 'sinceSeconds and sinceTime', q: { sinceSeconds: '3', sinceTime: '2026-01-01T00:00:10Z' } },
    { name: 'a bad sinceTime', q: { sinceTime: 'noon' } },
    { name: 'a bad boolean', q: { follow: 'yes' } },
  ];
  for (const tc of bad) it(`refuses ${tc.name}`, () => assert.throws(() => parseLogOptions(tc.q, now), LogOptionsError));
});

describe('ByteLimit (limitBytes)', () => {
  it('cuts the output at the limit', () => {
    const l = new ByteLimit(5);
    assert.equal(l.take('abc\n').toString(), 'abc\n');
    assert.equal(l.take('def\n').toString(), 'd');
    assert.ok(l.exhausted);
  });
});
