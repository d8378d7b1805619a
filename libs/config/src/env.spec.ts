import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, env, parseDuration, parseEnv, sharedSchema } from './env.js';

const schema = {
  ...sharedSchema(10313),
  RELIST_PERIOD: env.duration({ default: 1000, describe: 'relist period' }),
  ENDPOINT: env.url(['unix'], { default: 'unix:///run/x.sock', describe: 'socket' }),
  REPLICAS: env.int({ default: 1, min: 1, max: 8, describe: 'replicas' }),
  DNS_IPS: env.ips({ describe: 'DNS servers' }),
  DOMAIN: env.optionalMatch({ describe: 'a domain', pattern: /^[a-z]+(\.[a-z]+)*$/, patternHint: 'a domain' }),
};

describe('parseEnv: good environments', () => {
  const cases = [
    { name: 'empty: every default', env: {}, check: { PORT: 10313, HOST: '127.0.0.1', LOG_LEVEL: 'info', RELIST_PERIOD: 1000, NATS_URL: ['nats://127.0.0.1:4222'] } },
    { name: 'explicit values', env: { NODE_NAME: 'node-a', PORT: '8080', LOG_LEVEL: 'debug', RELIST_PERIOD: '1m30s' }, check: { NODE_NAME: 'node-a', PORT: 8080, LOG_LEVEL: 'debug', RELIST_PERIOD: 90_000 } },
    { name: 'several NATS servers', env: { NATS_URL: 'nats://a:4222, nats://b:4222' }, check: { NATS_URL: ['nats://a:4222', 'nats://b:4222'] } },
    { name: 'an FQDN node name', env: { NODE_NAME: 'ip-10-0-0-1.ec2.internal' }, check: { NODE_NAME: 'ip-10-0-0-1.ec2.internal' } },
    { name: 'blank is unset', env: { PORT: '  ' }, check: { PORT: 10313 } },
    { name: 'IPs unset: none', env: {}, check: { DNS_IPS: [], DOMAIN: undefined } },
    { name: 'IPv4 and IPv6, spaces trimmed', env: { DNS_IPS: '10.96.0.10, fd00::10', DOMAIN: 'cluster.local' }, check: { DNS_IPS: ['10.96.0.10', 'fd00::10'], DOMAIN: 'cluster.local' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cfg = parseEnv(schema, tc.env);
      for (const [k, v] of Object.entries(tc.check)) assert.deepEqual(cfg[k as keyof typeof cfg], v, k);
      assert.ok(Object.isFrozen(cfg));
    });
  }
});

describe('parseEnv: bad environments name the variable and why', () => {
  const cases = [
    { name: 'port out of range', env: { PORT: '70000' }, want: [/^PORT must be a TCP port between 1 and 65535, got "70000"/] },
    { name: 'port not a number', env: { PORT: 'http' }, want: [/^PORT must be a TCP port/] },
    { name: 'unknown log level', env: { LOG_LEVEL: 'verbose' }, want: [/^LOG_LEVEL must be one of debug, info, warn, error, got "verbose"/] },
    { name: 'NATS URL with a wrong scheme', env: { NATS_URL: 'http://127.0.0.1:4222' }, want: [/^NATS_URL must use the scheme nats or tls or ws or wss, got "http"/] },
    { name: 'NATS URL that is not a URL', env: { NATS_URL: 'localhost' }, want: [/^NATS_URL must be a URL/] },
    { name: 'node name with capitals', env: { NODE_NAME: 'Node_A' }, want: [/^NODE_NAME must be a lower-case RFC 1123 subdomain/] },
    { name: 'malformed duration', env: { RELIST_PERIOD: '10 seconds' }, want: [/^RELIST_PERIOD must be a duration like 500ms/] },
    { name: 'endpoint not a unix socket', env: { ENDPOINT: 'tcp://127.0.0.1:1' }, want: [/^ENDPOINT must use the scheme unix, got "tcp"/] },
    { name: 'int below its minimum', env: { REPLICAS: '0' }, want: [/^REPLICAS must be at least 1, got 0/] },
    { name: 'an IP that is not one', env: { DNS_IPS: '10.96.0.10,10.96.0.300' }, want: [/^DNS_IPS must be comma-separated IP addresses, got "10.96.0.300"/] },
    { name: 'a string that does not match', env: { DOMAIN: 'Cluster Local' }, want: [/^DOMAIN must be a domain, got "Cluster Local"/] },
    { name: 'every problem at once', env: { PORT: '0', LOG_LEVEL: 'x' }, want: [/^PORT /, /^LOG_LEVEL /] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      assert.throws(
        () => parseEnv(schema, tc.env),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.equal(err.problems.length, tc.want.length, err.message);
          tc.want.forEach((re, i) => assert.match(err.problems[i] ?? '', re));
          return true;
        },
      );
    });
  }

  it('a required variable without a default says it is required', () => {
    const required = { CONTAINER_RUNTIME_ENDPOINT: env.url(['unix'], { describe: 'the CRI socket' }) };
    assert.throws(() => parseEnv(required, {}), /CONTAINER_RUNTIME_ENDPOINT is required but not set \(the CRI socket\)/);
  });
});

describe('parseDuration', () => {
  const cases: [string, number | undefined][] = [
    ['0', 0],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['', undefined],
    ['10', undefined],
    ['5d', undefined],
    ['s', undefined],
  ];
  for (const [input, want] of cases) it(`"${input}"`, () => assert.equal(parseDuration(input), want));
});
