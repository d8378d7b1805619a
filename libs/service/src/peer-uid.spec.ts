import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect } from 'node:net';
import { addressBytes, procAddressBytes, procPeerUid, uidInTable } from './peer-uid.js';

// Two lines of a real /proc/net/tcp (x86, little-endian): a listener on 127.0.0.1:10250 and a client 127.0.0.1:40000 -> :10250 owned by uid 65534.
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C40 0100007F:280A 01 00000000:00000000 00:00000000 00000000 65534        0 1002 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:280A 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1
`;
// /proc/net/tcp6: a client [::1]:40000 -> [::1]:10250 owned by uid 1000.
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:9C40 00000000000000000000000001000000:280A 01 00000000:00000000 00:00000000 00000000  1000        0 2002 1 0000000000000000 20 4 30 10 -1
`;

describe('peer uid from the kernel socket tables', () => {
  it('addressBytes: IPv4 becomes ::ffff:a.b.c.d, IPv6 forms expand, junk is undefined', () => {
    assert.equal(addressBytes('127.0.0.1')?.toString('hex'), '00000000000000000000ffff7f000001');
    assert.equal(addressBytes('::ffff:127.0.0.1')?.toString('hex'), '00000000000000000000ffff7f000001');
    assert.equal(addressBytes('::1')?.toString('hex'), '00000000000000000000000000000001');
    assert.equal(addressBytes('[fe80::1%eth0]')?.toString('hex'), 'fe800000000000000000000000000001');
    assert.equal(addressBytes('1:2:3:4:5:6:7:8')?.toString('hex'), '00010002000300040005000600070008');
    assert.equal(addressBytes('node-1'), undefined);
  });
  it('procAddressBytes reads host-order words, on either endianness', () => {
    assert.equal(procAddressBytes('0100007F', true).toString('hex'), '00000000000000000000ffff7f000001');
    assert.equal(procAddressBytes('7F000001', false).toString('hex'), '00000000000000000000ffff7f000001');
    assert.equal(procAddressBytes('00000000000000000000000001000000', true).toString('hex'), '00000000000000000000000000000001');
  });
  it('finds the client end of the connection, not the server end or the listener', () => {
    assert.equal(uidInTable(TCP, { address: '127.0.0.1', port: 40000 }, { address: '127.0.0.1', port: 10250 }, true), 65534);
    assert.equal(uidInTable(TCP, { address: '127.0.0.1', port: 40001 }, { address: '127.0.0.1', port: 10250 }, true), undefined);
    assert.equal(uidInTable(TCP, { address: '127.0.0.2', port: 40000 }, { address: '127.0.0.1', port: 10250 }, true), undefined);
    assert.equal(uidInTable(TCP6, { address: '::1', port: 40000 }, { address: '::1', port: 10250 }, true), 1000);
  });
  it('on this machine: a real loopback connection is owned by this process\'s uid', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<import('node:net').Socket>((resolve) => server.once('connection', resolve));
    const port = (server.address() as import('node:net').AddressInfo).port;
    const client = connect(port, '127.0.0.1');
    const s = await accepted;
    try {
      const uid = await procPeerUid({ address: s.remoteAddress ?? '', port: s.remotePort ?? 0 }, { address: s.localAddress ?? '', port: s.localPort ?? 0 });
      assert.equal(uid, process.getuid?.());
    } finally {
      client.destroy();
      s.destroy();
      server.close();
    }
  });
});
