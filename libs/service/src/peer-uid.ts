/**
 * Who is on the other end of a loopback TCP connection: the uid that owns
 * the client's socket, from the kernel's socket tables (/proc/net/tcp and
 * tcp6, the `uid` column of the entry whose local end is the request's
 * remote end and whose remote end is our local end). This is what identd
 * answers, and it is exact for loopback: both ends are sockets of this
 * kernel (of this network namespace, which /proc/net shows).
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { isIP } from 'node:net';

/** One end of a TCP connection. */
export interface Endpoint {
  address: string;
  port: number;
}

/** The uid owning the socket at `client` connected to `server`, undefined when the tables do not hold it. */
export type PeerUidLookup = (client: Endpoint, server: Endpoint) => Promise<number | undefined>;

/** 16 bytes of an address (IPv4 as ::ffff:a.b.c.d), or undefined when it is not one. */
export function addressBytes(address: string): Buffer | undefined {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(a) === 4) return Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...a.split('.').map(Number)]);
  if (isIP(a) !== 6) return undefined;
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  const head = v4 ? (v4[1] ?? '') : a;
  const tail = v4 ? (addressBytes(v4[2] ?? '') ?? Buffer.alloc(16)).subarray(12) : Buffer.alloc(0);
  const words = (s: string) => (s === '' ? [] : s.split(':').filter((w) => w !== ''));
  const [left = '', right] = head.split('::');
  const l = words(left);
  const r = right === undefined ? [] : words(right);
  const missing = 8 - tail.length / 2 - l.length - r.length;
  const all = [...l, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...r];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(parseInt(w, 16), i * 2));
  tail.copy(out, 12);
  return out;
}

/** An address as /proc/net/tcp{,6} prints it (32-bit words in host order), as 16 bytes. */
export function procAddressBytes(hex: string, littleEndian = endianness() === 'LE'): Buffer {
  const raw = Buffer.alloc(hex.length / 2);
  for (let i = 0; i < hex.length / 8; i++) {
    const word = parseInt(hex.slice(i * 8, i * 8 + 8), 16);
    if (littleEndian) raw.writeUInt32LE(word, i * 4);
    else raw.writeUInt32BE(word, i * 4);
  }
  return raw.length === 4 ? Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]), raw]) : raw;
}

/** The uid of the entry `local -> remote` in a /proc/net/tcp table's text. */
export function uidInTable(table: string, local: Endpoint, remote: Endpoint, littleEndian?: boolean): number | undefined {
  const want = { la: addressBytes(local.address), ra: addressBytes(remote.address) };
  if (!want.la || !want.ra) return undefined;
  for (const line of table.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
    const f = line.trim().split(/\s+/);
    const [la, ra, uid] = [f[1], f[2], f[7]];
    if (!la || !ra || uid === undefined) continue;
    const [laHex = '', lpHex = ''] = la.split(':');
    const [raHex = '', rpHex = ''] = ra.split(':');
    if (parseInt(lpHex, 16) !== local.port || parseInt(rpHex, 16) !== remote.port) continue;
    if (!procAddressBytes(laHex, littleEndian).equals(want.la) || !procAddressBytes(raHex, littleEndian).equals(want.ra)) continue;
    return Number(uid);
  }
  return undefined;
}

/** The lookup over this machine's /proc/net/tcp and /proc/net/tcp6. */
export const procPeerUid: PeerUidLookup = async (client, server) => {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const table = await readFile(file, 'utf8').catch(() => '');
    const uid = uidInTable(table, client, server);
    if (uid !== undefined) return uid;
  }
  return undefined;
};
