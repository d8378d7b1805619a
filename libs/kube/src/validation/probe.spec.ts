import { describe } from 'node:test';
import { app, type Case, loose, runCases, sidecar } from './validation.testing.js';

const cases: Case[] = [
  // probes
  { name: 'a probe needs a handler', mutate: (p) => (app(p).livenessProbe = { periodSeconds: 5 }), want: [{ field: 'spec.containers[0].livenessProbe', message: /^Required value: must specify a handler type$/ }] },
  {
    name: 'a probe has one handler only',
    mutate: (p) => (app(p).livenessProbe = { httpGet: { port: 8080 }, tcpSocket: { port: 8080 } }),
    want: [{ field: 'spec.containers[0].livenessProbe.tcpSocket', message: /^Forbidden: may not specify more than 1 handler type$/ }],
  },
  {
    name: 'a probe with three handlers has two too many',
    mutate: (p) => (app(p).readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 8080 }, grpc: { port: 9000 } }),
    want: [
      { field: 'spec.containers[0].readinessProbe.tcpSocket', message: /^Forbidden: may not specify more than 1 handler type$/ },
      { field: 'spec.containers[0].readinessProbe.grpc', message: /^Forbidden: may not specify more than 1 handler type$/ },
    ],
  },
  { name: 'initialDelaySeconds must not be negative', mutate: (p) => ((app(p).livenessProbe ?? {}).initialDelaySeconds = -5), want: [{ field: 'spec.containers[0].livenessProbe.initialDelaySeconds', message: /^Invalid value: -5: must be greater than or equal to 0$/ }] },
  { name: 'initialDelaySeconds 0 is fine', mutate: (p) => ((app(p).livenessProbe ?? {}).initialDelaySeconds = 0), want: [] },
  { name: 'periodSeconds must not be negative', mutate: (p) => ((app(p).livenessProbe ?? {}).periodSeconds = -1), want: [{ field: 'spec.containers[0].livenessProbe.periodSeconds', message: /^Invalid value: -1: must be greater than or equal to 0$/ }] },
  { name: 'timeoutSeconds must be an integer', mutate: (p) => ((app(p).readinessProbe ?? {}).timeoutSeconds = 1.5), want: [{ field: 'spec.containers[0].readinessProbe.timeoutSeconds', message: /^Invalid value: 1.5: must be an integer$/ }] },
  { name: 'failureThreshold must be a number', mutate: (p) => (loose(app(p).readinessProbe ?? {})['failureThreshold'] = '3'), want: [{ field: 'spec.containers[0].readinessProbe.failureThreshold', message: /^Invalid value: "3": must be an integer$/ }] },
  { name: 'successThreshold must not be negative', mutate: (p) => ((app(p).readinessProbe ?? {}).successThreshold = -2), want: [{ field: 'spec.containers[0].readinessProbe.successThreshold', message: /must be greater than or equal to 0$/ }] },
  {
    name: 'after defaulting, periodSeconds, timeoutSeconds and the thresholds are at least 1',
    afterDefaults: (p) => Object.assign(app(p).readinessProbe ?? {}, { periodSeconds: 0, timeoutSeconds: 0, successThreshold: 0, failureThreshold: 0 }),
    want: ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'].map((f) => ({ field: `spec.containers[0].readinessProbe.${f}`, message: /^Invalid value: 0: must be greater than or equal to 1$/ })),
  },
  { name: "a liveness probe's successThreshold must be 1", mutate: (p) => ((app(p).livenessProbe ?? {}).successThreshold = 2), want: [{ field: 'spec.containers[0].livenessProbe.successThreshold', message: /^Invalid value: 2: must be 1$/ }] },
  { name: "a startup probe's successThreshold must be 1", mutate: (p) => ((app(p).startupProbe ?? {}).successThreshold = 3), want: [{ field: 'spec.containers[0].startupProbe.successThreshold', message: /^Invalid value: 3: must be 1$/ }] },
  { name: "a readiness probe's successThreshold may be more than 1", mutate: (p) => ((app(p).readinessProbe ?? {}).successThreshold = 3), want: [] },
  { name: "a probe's terminationGracePeriodSeconds must be positive", mutate: (p) => ((app(p).livenessProbe ?? {}).terminationGracePeriodSeconds = 0), want: [{ field: 'spec.containers[0].livenessProbe.terminationGracePeriodSeconds', message: /must be greater than 0$/ }] },
  { name: 'a probe port above 65535', mutate: (p) => (app(p).readinessProbe = { tcpSocket: { port: 65536 } }), want: [{ field: 'spec.containers[0].readinessProbe.tcpSocket.port', message: /^Invalid value: 65536: must be between 1 and 65535, inclusive$/ }] },
  { name: 'a probe port of 0', mutate: (p) => (app(p).readinessProbe = { httpGet: { port: 0 } }), want: [{ field: 'spec.containers[0].readinessProbe.httpGet.port', message: /must be between 1 and 65535, inclusive$/ }] },
  { name: 'a probe port is required', mutate: (p) => (loose(app(p))['readinessProbe'] = { tcpSocket: {} }), want: [{ field: 'spec.containers[0].readinessProbe.tcpSocket.port', message: /^Required value$/ }] },
  {
    name: "a named probe port must be one of the container's ports",
    mutate: (p) => (app(p).readinessProbe = { tcpSocket: { port: 'metrics' } }),
    want: [{ field: 'spec.containers[0].readinessProbe.tcpSocket.port', message: /port name "metrics" is not a port of container "app"$/ }],
  },
  {
    name: "a named probe port of another container's ports is not enough",
    mutate: (p) => (sidecar(p).livenessProbe = { httpGet: { port: 'web' } }),
    want: [{ field: 'spec.containers[1].livenessProbe.httpGet.port', message: /port name "web" is not a port of container "sidecar"$/ }],
  },
  { name: 'a named probe port must be a valid port name', mutate: (p) => (app(p).readinessProbe = { tcpSocket: { port: 'Web' } }), want: [{ field: 'spec.containers[0].readinessProbe.tcpSocket.port', message: /must contain only alpha-numeric characters/ }] },
  { name: 'a numeric port written as a string is a port name, and not a valid one', mutate: (p) => (app(p).readinessProbe = { tcpSocket: { port: '8080' } }), want: [{ field: 'spec.containers[0].readinessProbe.tcpSocket.port', message: /must contain at least one letter/ }] },
  { name: 'a grpc probe with a numeric port', mutate: (p) => (app(p).readinessProbe = { grpc: { port: 9000, service: 'health' } }), want: [] },
  { name: 'a grpc probe needs a numeric port', mutate: (p) => (loose(app(p))['readinessProbe'] = { grpc: { port: 'web' } }), want: [{ field: 'spec.containers[0].readinessProbe.grpc.port', message: /^Invalid value: "web": must be a port number/ }] },
  { name: 'an exec probe needs a command', mutate: (p) => (app(p).startupProbe = { exec: { command: [] } }), want: [{ field: 'spec.containers[0].startupProbe.exec.command', message: /^Required value$/ }] },
  { name: 'an exec probe without command', mutate: (p) => (app(p).startupProbe = { exec: {} }), want: [{ field: 'spec.containers[0].startupProbe.exec.command', message: /^Required value$/ }] },
  { name: 'an httpGet scheme must be HTTP or HTTPS', mutate: (p) => (loose(app(p))['livenessProbe'] = { httpGet: { port: 'web', scheme: 'FTP' } }), want: [{ field: 'spec.containers[0].livenessProbe.httpGet.scheme', message: /^Unsupported value: "FTP": supported values: "HTTP", "HTTPS"$/ }] },
  { name: 'an httpGet header name must be a token', mutate: (p) => (app(p).livenessProbe = { httpGet: { port: 'web', httpHeaders: [{ name: 'X Bad', value: '1' }] } }), want: [{ field: 'spec.containers[0].livenessProbe.httpGet.httpHeaders[0].name', message: /a valid HTTP header must consist of/ }] },

  // lifecycle
  {
    name: 'a lifecycle handler has one handler only',
    mutate: (p) => (app(p).lifecycle = { preStop: { exec: { command: ['true'] }, httpGet: { port: 'web' } } }),
    want: [{ field: 'spec.containers[0].lifecycle.preStop.httpGet', message: /^Forbidden: may not specify more than 1 handler type$/ }],
  },
  { name: 'a lifecycle handler needs a handler', mutate: (p) => (app(p).lifecycle = { postStart: {} }), want: [{ field: 'spec.containers[0].lifecycle.postStart', message: /^Required value: must specify a handler type$/ }] },
  { name: 'a lifecycle httpGet port name must be a port of the container', mutate: (p) => (sidecar(p).lifecycle = { postStart: { httpGet: { port: 'web' } } }), want: [{ field: 'spec.containers[1].lifecycle.postStart.httpGet.port', message: /port name "web" is not a port of container "sidecar"$/ }] },
  { name: 'a sleep hook within the grace period', mutate: (p) => (app(p).lifecycle = { preStop: { sleep: { seconds: 5 } } }), want: [] },
  { name: 'a sleep hook longer than the grace period', mutate: (p) => (app(p).lifecycle = { preStop: { sleep: { seconds: 60 } } }), want: [{ field: 'spec.containers[0].lifecycle.preStop.sleep.seconds', message: /^Invalid value: 60: must be non-negative and less than terminationGracePeriodSeconds \(30\)$/ }] },
];

describe('validatePod: probes and lifecycle handlers', () => {
  runCases(cases);
});
