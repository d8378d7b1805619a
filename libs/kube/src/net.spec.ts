import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { joinHostPort } from './net.js';

describe('joinHostPort (net.JoinHostPort)', () => {
  const cases: { name: string; host: string; port: string | number; want: string }[] = [
    { name: 'IPv4', host: '10.88.0.5', port: 8080, want: '10.88.0.5:8080' },
    { name: 'a host name', host: 'localhost', port: '80', want: 'localhost:80' },
    { name: 'IPv6 in brackets', host: 'fd00::5', port: 8080, want: '[fd00::5]:8080' },
    { name: 'IPv6 with a zone', host: 'fe80::1%eth0', port: 53, want: '[fe80::1%eth0]:53' },
    { name: 'an empty host', host: '', port: 80, want: ':80' },
    { name: 'a named port stays as written', host: '10.0.0.1', port: 'http', want: '10.0.0.1:http' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(joinHostPort(tc.host, tc.port), tc.want));
});
