import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { SystemClock } from '@app/clock';
import { NetTcpDialer } from '@app/probe';
import { closedPort, expectOutcome, probeTarget as target } from '../testing.js';
import { TcpSocketProbeHandler } from './tcp-socket.js';

describe('TcpSocketProbeHandler (loopback TCP server)', () => {
  let server: ReturnType<typeof createNetServer>;
  let port = 0;
  let accepted = 0;

  before(async () => {
    server = createNetServer((s) => {
      accepted++;
      s.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
    await once(server, 'close');
  });

  const handler = () => new TcpSocketProbeHandler(new NetTcpDialer(), new SystemClock());

  it('a listening port is a success', async () => {
    const before = accepted;
    expectOutcome(await handler().run({ tcpSocket: { port } }, target(), 1000), { result: 'Success', output: '' });
    await new Promise((r) => setImmediate(r));
    assert.equal(accepted - before, 1, 'the server saw the connection');
  });

  it('the port by name', async () => {
    expectOutcome(await handler().run({ tcpSocket: { port: 'db' } }, target({ ports: [{ name: 'db', containerPort: port }] }), 1000), { result: 'Success' });
  });

  it('a closed port is a failure', async () => {
    const closed = await closedPort();
    expectOutcome(await handler().run({ tcpSocket: { port: closed } }, target(), 1000), { result: 'Failure', output: `dial tcp 127.0.0.1:${closed}: connect: connection refused` });
  });

  it('an invalid port is unknown', async () => {
    expectOutcome(await handler().run({ tcpSocket: { port: 70_000 } }, target(), 1000), { result: 'Unknown', output: 'invalid port number: 70000' });
  });
});
