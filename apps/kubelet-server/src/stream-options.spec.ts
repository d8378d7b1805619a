import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletServerError } from './ports.js';
import { execCommand, isUpgradeRequest, isWebSocketRequest, parsePortForwardPorts, parseStreamOptions, runCommand } from './stream-options.js';

const q = (s: string) => new URLSearchParams(s);

describe('exec and attach options (remotecommand NewOptions)', () => {
  const cases = [
    { name: 'kubectl exec: output and error', query: 'command=echo&command=hi&output=1&error=1', want: { stdin: false, stdout: true, stderr: true, tty: false } },
    { name: 'kubectl exec -i: input too', query: 'command=cat&input=1&output=1&error=1', want: { stdin: true, stdout: true, stderr: true, tty: false } },
    { name: 'kubectl exec -it: tty drops stderr', query: 'command=sh&input=1&output=1&error=1&tty=1', want: { stdin: true, stdout: true, stderr: false, tty: true } },
    { name: 'a stream is on only with 1', query: 'output=true&error=1', want: { stdin: false, stdout: false, stderr: true, tty: false } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(parseStreamOptions(q(tc.query)), tc.want));

  it('no stream at all: 400', () => {
    assert.throws(() => parseStreamOptions(q('command=ls&tty=1')), (e: unknown) => e instanceof KubeletServerError && e.status === 400 && e.message === 'you must specify at least 1 of stdin, stdout, stderr');
  });

  it('the command: every command parameter in order; /run\'s cmd split on spaces', () => {
    assert.deepEqual(execCommand(q('command=sh&command=-c&command=echo a b')), ['sh', '-c', 'echo a b']);
    assert.deepEqual(runCommand(q('cmd=echo%20a%20b')), ['echo', 'a', 'b']);
  });
});

describe('port-forward ports (NewV4Options)', () => {
  it('SPDY: the ports come in the streams, none from the query', () => assert.deepEqual(parsePortForwardPorts(q('port=80'), false), []));
  it('websocket: repeated and comma-separated', () => assert.deepEqual(parsePortForwardPorts(q('port=80,8080&port=9000'), true), [80, 8080, 9000]));
  const bad = [
    { name: 'none', query: '', message: 'query parameter "port" is required' },
    { name: 'empty', query: 'port=', message: 'query parameter "port" cannot be empty' },
    { name: 'not a number', query: 'port=http', message: 'unable to parse "http" as a port' },
    { name: 'too big', query: 'port=70000', message: 'unable to parse "70000" as a port' },
    { name: 'zero', query: 'port=0', message: 'port "0" must be > 0' },
  ];
  for (const tc of bad) it(`websocket, ${tc.name}: 400`, () => assert.throws(() => parsePortForwardPorts(q(tc.query), true), (e: unknown) => e instanceof KubeletServerError && e.status === 400 && e.message === tc.message));
});

describe('upgrade requests', () => {
  it('SPDY and websocket', () => {
    assert.equal(isUpgradeRequest({ connection: 'Upgrade', upgrade: 'SPDY/3.1' }), true);
    assert.equal(isWebSocketRequest({ connection: 'Upgrade', upgrade: 'SPDY/3.1' }), false);
    assert.equal(isWebSocketRequest({ connection: 'keep-alive, Upgrade', upgrade: 'websocket' }), true);
    assert.equal(isUpgradeRequest({ connection: 'keep-alive' }), false);
  });
});
