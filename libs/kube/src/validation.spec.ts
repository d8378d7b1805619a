import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { applyPodDefaults } from './defaults.js';
import { formatFieldErrors, validatePod, type FieldError } from './validation.js';

/** A valid pod touching every rule: two containers, an init container, a volume, probes, a hook. */
function basePod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-node1', namespace: 'default', labels: { app: 'web' }, annotations: { 'kubernetes.io/config.source': 'file' } },
    spec: {
      volumes: [{ name: 'data', emptyDir: {} }],
      initContainers: [{ name: 'init', image: 'busybox:1.35', command: ['true'] }],
      containers: [
        {
          name: 'app',
          image: 'busybox:1.35',
          ports: [{ name: 'web', containerPort: 8080 }],
          env: [{ name: 'GREETING', value: 'hello' }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          livenessProbe: { httpGet: { port: 'web' } },
          readinessProbe: { tcpSocket: { port: 8080 } },
          startupProbe: { exec: { command: ['true'] } },
          lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
        },
        { name: 'sidecar', image: 'busybox:1.35' },
      ],
    },
  };
}

/** Loosely typed access, for writing what a manifest may hold but the types forbid. */
type Loose = Record<string, unknown>;
const loose = (v: object): Loose => v as Loose;
const app = (p: Pod): Container => {
  const c = p.spec.containers[0];
  assert.ok(c);
  return c;
};
const sidecar = (p: Pod): Container => {
  const c = p.spec.containers[1];
  assert.ok(c);
  return c;
};
const init = (p: Pod): Container => {
  const c = p.spec.initContainers?.[0];
  assert.ok(c);
  return c;
};

interface Case {
  name: string;
  /** Changes the pod as read, before the defaults. */
  mutate?: (p: Pod) => void;
  /** Changes the defaulted pod (for what defaulting would otherwise repair). */
  afterDefaults?: (p: Pod) => void;
  /** The errors, in order: the field exactly, the message by pattern. Empty: the pod is valid. */
  want: { field: string; message: RegExp }[];
}

const DNS_LABEL = /^Invalid value: .*a lowercase RFC 1123 label must consist of/;
const DNS_SUBDOMAIN = /^Invalid value: .*a lowercase RFC 1123 subdomain must consist of/;

const cases: Case[] = [
  { name: 'the base pod is valid', want: [] },

  // metadata
  { name: 'metadata.name is required', mutate: (p) => delete p.metadata.name, want: [{ field: 'metadata.name', message: /^Required value: name or generateName is required$/ }] },
  { name: 'metadata.name must be a DNS-1123 subdomain (uppercase)', mutate: (p) => (p.metadata.name = 'Web'), want: [{ field: 'metadata.name', message: DNS_SUBDOMAIN }] },
  { name: 'metadata.name must be a DNS-1123 subdomain (underscore)', mutate: (p) => (p.metadata.name = 'web_1'), want: [{ field: 'metadata.name', message: DNS_SUBDOMAIN }] },
  { name: 'metadata.name may hold dots and dashes', mutate: (p) => (p.metadata.name = 'web-1.node.example'), want: [] },
  { name: 'metadata.name of 253 characters is fine', mutate: (p) => (p.metadata.name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`), want: [] },
  { name: 'metadata.name of 254 characters is too long', mutate: (p) => (p.metadata.name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`), want: [{ field: 'metadata.name', message: /must be no more than 253 characters$/ }] },
  { name: 'metadata.namespace may be unset', mutate: (p) => delete p.metadata.namespace, want: [] },
  { name: 'metadata.namespace must be a DNS-1123 label', mutate: (p) => (p.metadata.namespace = 'kube.system'), want: [{ field: 'metadata.namespace', message: DNS_LABEL }] },
  { name: 'label values must be valid', mutate: (p) => (p.metadata.labels = { app: 'a b' }), want: [{ field: 'metadata.labels', message: /^Invalid value: "a b": a valid label must be/ }] },
  { name: 'label keys must be qualified names', mutate: (p) => (p.metadata.labels = { 'a/b/c': 'x' }), want: [{ field: 'metadata.labels', message: /^Invalid value: "a\/b\/c": a qualified name must consist/ }] },
  { name: 'annotation keys must be qualified names', mutate: (p) => (p.metadata.annotations = { '-bad': 'x' }), want: [{ field: 'metadata.annotations', message: /name part must consist of/ }] },

  // containers
  { name: 'spec.containers must not be empty', mutate: (p) => (p.spec.containers = []), want: [{ field: 'spec.containers', message: /^Required value$/ }] },
  { name: 'spec.containers must be a list', mutate: (p) => (loose(p.spec)['containers'] = { name: 'app' }), want: [{ field: 'spec.containers', message: /must be a list$/ }] },
  { name: 'a container must be an object', mutate: (p) => (loose(p.spec)['containers'] = ['app']), want: [{ field: 'spec.containers[0]', message: /^Invalid value: "app": must be an object$/ }] },
  { name: 'a container name is required', mutate: (p) => (loose(app(p))['name'] = ''), want: [{ field: 'spec.containers[0].name', message: /^Required value$/ }] },
  { name: 'a container name must be a DNS-1123 label', mutate: (p) => (sidecar(p).name = 'Side.Car'), want: [{ field: 'spec.containers[1].name', message: DNS_LABEL }] },
  { name: 'a container name of 63 characters is fine', mutate: (p) => (sidecar(p).name = 'a'.repeat(63)), want: [] },
  { name: 'a container name of 64 characters is too long', mutate: (p) => (sidecar(p).name = 'a'.repeat(64)), want: [{ field: 'spec.containers[1].name', message: /must be no more than 63 characters$/ }] },
  { name: 'container names are unique', mutate: (p) => (sidecar(p).name = 'app'), want: [{ field: 'spec.containers[1].name', message: /^Duplicate value: "app"$/ }] },
  { name: 'container names are unique across init containers and containers', mutate: (p) => (init(p).name = 'sidecar'), want: [{ field: 'spec.initContainers[0].name', message: /^Duplicate value: "sidecar"$/ }] },
  { name: 'an image is required', mutate: (p) => delete sidecar(p).image, want: [{ field: 'spec.containers[1].image', message: /^Required value$/ }] },
  { name: 'an image may not be empty', mutate: (p) => (init(p).image = ''), want: [{ field: 'spec.initContainers[0].image', message: /^Required value$/ }] },
  { name: 'an image may not have surrounding whitespace', mutate: (p) => (sidecar(p).image = ' busybox:1.35'), want: [{ field: 'spec.containers[1].image', message: /^Invalid value: " busybox:1.35": must not have leading or trailing whitespace$/ }] },

  // ports
  { name: 'containerPort is required', mutate: (p) => delete loose(app(p).ports?.[0] ?? {})['containerPort'], want: [{ field: 'spec.containers[0].ports[0].containerPort', message: /^Required value$/ }] },
  { name: 'containerPort above 65535', mutate: (p) => (sidecar(p).ports = [{ containerPort: 65536 }]), want: [{ field: 'spec.containers[1].ports[0].containerPort', message: /^Invalid value: 65536: must be between 1 and 65535, inclusive$/ }] },
  { name: 'containerPort negative', mutate: (p) => (sidecar(p).ports = [{ containerPort: -1 }]), want: [{ field: 'spec.containers[1].ports[0].containerPort', message: /must be between 1 and 65535, inclusive$/ }] },
  { name: 'containerPort 65535 is fine', mutate: (p) => (sidecar(p).ports = [{ containerPort: 65535 }]), want: [] },
  { name: 'hostPort above 65535', mutate: (p) => (sidecar(p).ports = [{ containerPort: 80, hostPort: 70000 }]), want: [{ field: 'spec.containers[1].ports[0].hostPort', message: /^Invalid value: 70000: must be between 1 and 65535, inclusive$/ }] },
  { name: 'hostPort 0 means none', mutate: (p) => (sidecar(p).ports = [{ containerPort: 80, hostPort: 0 }]), want: [] },
  { name: 'protocol must be TCP, UDP or SCTP', mutate: (p) => (loose(sidecar(p))['ports'] = [{ containerPort: 80, protocol: 'HTTP' }]), want: [{ field: 'spec.containers[1].ports[0].protocol', message: /^Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"$/ }] },
  { name: 'protocols SCTP and UDP are fine', mutate: (p) => (sidecar(p).ports = [{ containerPort: 80, protocol: 'SCTP' }, { containerPort: 53, protocol: 'UDP' }]), want: [] },
  { name: 'a port name of more than 15 characters', mutate: (p) => (sidecar(p).ports = [{ name: 'a-very-long-name', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must be no more than 15 characters$/ }] },
  { name: 'a port name in uppercase', mutate: (p) => (sidecar(p).ports = [{ name: 'Web', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must contain only alpha-numeric characters \(a-z, 0-9\), and hyphens \(-\)$/ }] },
  { name: 'a port name without a letter', mutate: (p) => (sidecar(p).ports = [{ name: '8080', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must contain at least one letter \(a-z\)$/ }] },
  { name: 'a port name with consecutive hyphens', mutate: (p) => (sidecar(p).ports = [{ name: 'we--b', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must not contain consecutive hyphens$/ }] },
  { name: 'a port name starting with a hyphen', mutate: (p) => (sidecar(p).ports = [{ name: '-web', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must not begin or end with a hyphen$/ }] },
  { name: 'a port name ending with a hyphen', mutate: (p) => (sidecar(p).ports = [{ name: 'web-', containerPort: 80 }]), want: [{ field: 'spec.containers[1].ports[0].name', message: /must not begin or end with a hyphen$/ }] },
  { name: 'port names are unique within a container', mutate: (p) => app(p).ports?.push({ name: 'web', containerPort: 9090 }), want: [{ field: 'spec.containers[0].ports[1].name', message: /^Duplicate value: "web"$/ }] },
  { name: 'the same port name in two containers is fine', mutate: (p) => (sidecar(p).ports = [{ name: 'web', containerPort: 9090 }]), want: [] },
  {
    name: 'a host port is used once per protocol',
    mutate: (p) => {
      app(p).ports = [{ containerPort: 80, hostPort: 8080 }];
      sidecar(p).ports = [{ containerPort: 81, hostPort: 8080 }, { containerPort: 82, hostPort: 8080, protocol: 'UDP' }];
      delete app(p).livenessProbe;
    },
    want: [{ field: 'spec.containers[1].ports[0].hostPort', message: /^Duplicate value: "TCP\/\/8080"$/ }],
  },
  { name: 'with hostNetwork, hostPort defaults to containerPort', mutate: (p) => (p.spec.hostNetwork = true), want: [] },
  {
    name: 'with hostNetwork, hostPort must match containerPort',
    mutate: (p) => {
      p.spec.hostNetwork = true;
      sidecar(p).ports = [{ containerPort: 80, hostPort: 8081 }];
    },
    want: [{ field: 'spec.containers[1].ports[0].containerPort', message: /^Invalid value: 80: must match `hostPort` when `hostNetwork` is true$/ }],
  },

  // restart policies
  { name: 'restartPolicy OnFailure', mutate: (p) => (p.spec.restartPolicy = 'OnFailure'), want: [] },
  { name: 'restartPolicy Never', mutate: (p) => (p.spec.restartPolicy = 'Never'), want: [] },
  { name: 'restartPolicy must be Always, OnFailure or Never', mutate: (p) => (loose(p.spec)['restartPolicy'] = 'Sometimes'), want: [{ field: 'spec.restartPolicy', message: /^Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"$/ }] },
  { name: 'restartPolicy is required (an undefaulted pod)', afterDefaults: (p) => delete p.spec.restartPolicy, want: [{ field: 'spec.restartPolicy', message: /^Required value$/ }] },
  { name: 'an init container may be a sidecar (restartPolicy Always), with probes', mutate: (p) => Object.assign(init(p), { restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } }), want: [] },
  { name: "an init container's restartPolicy can only be Always", mutate: (p) => (loose(init(p))['restartPolicy'] = 'Never'), want: [{ field: 'spec.initContainers[0].restartPolicy', message: /^Unsupported value: "Never": supported values: "Always"$/ }] },
  { name: 'a plain init container may not have probes', mutate: (p) => (init(p).livenessProbe = { exec: { command: ['true'] } }), want: [{ field: 'spec.initContainers[0].livenessProbe', message: /^Forbidden: may not be set for init containers without restartPolicy=Always$/ }] },
  { name: 'a plain init container may not have lifecycle hooks', mutate: (p) => (init(p).lifecycle = { postStart: { exec: { command: ['true'] } } }), want: [{ field: 'spec.initContainers[0].lifecycle', message: /^Forbidden: may not be set for init containers/ }] },
  { name: 'a regular container may not have a restartPolicy', mutate: (p) => (sidecar(p).restartPolicy = 'Always'), want: [{ field: 'spec.containers[1].restartPolicy', message: /^Forbidden: may not be set for non-init containers$/ }] },

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

  // pod-level numbers and DNS
  { name: 'terminationGracePeriodSeconds 0 is fine', mutate: (p) => (p.spec.terminationGracePeriodSeconds = 0), want: [] },
  { name: 'terminationGracePeriodSeconds must not be negative', mutate: (p) => (p.spec.terminationGracePeriodSeconds = -1), want: [{ field: 'spec.terminationGracePeriodSeconds', message: /^Invalid value: -1: must be greater than or equal to 0$/ }] },
  { name: 'activeDeadlineSeconds 1 is fine', mutate: (p) => (p.spec.activeDeadlineSeconds = 1), want: [] },
  { name: 'activeDeadlineSeconds must be at least 1', mutate: (p) => (p.spec.activeDeadlineSeconds = 0), want: [{ field: 'spec.activeDeadlineSeconds', message: /^Invalid value: 0: must be between 1 and 2147483647, inclusive$/ }] },
  { name: 'dnsPolicy must be one of the four', mutate: (p) => (p.spec.dnsPolicy = 'Bogus'), want: [{ field: 'spec.dnsPolicy', message: /^Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"$/ }] },
  { name: 'dnsPolicy None needs a dnsConfig', mutate: (p) => (p.spec.dnsPolicy = 'None'), want: [{ field: 'spec.dnsConfig', message: /^Required value: must provide `dnsConfig` when `dnsPolicy` is None$/ }] },
  { name: 'dnsPolicy None with nameservers', mutate: (p) => Object.assign(p.spec, { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.10'] } }), want: [] },
  { name: 'nameservers must be IP addresses', mutate: (p) => (p.spec.dnsConfig = { nameservers: ['dns.example'] }), want: [{ field: 'spec.dnsConfig.nameservers[0]', message: /must be a valid IP address$/ }] },
  { name: 'tolerations: Exists takes no value', mutate: (p) => (p.spec.tolerations = [{ key: 'k', operator: 'Exists', value: 'v' }]), want: [{ field: 'spec.tolerations[0].value', message: /value must be empty when `operator` is 'Exists'$/ }] },
  { name: 'tolerations: an empty key needs Exists', mutate: (p) => (p.spec.tolerations = [{ operator: 'Equal', value: 'v' }]), want: [{ field: 'spec.tolerations[0].operator', message: /operator must be Exists when `key` is empty/ }] },
  { name: 'tolerations: tolerationSeconds needs NoExecute', mutate: (p) => (p.spec.tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }]), want: [{ field: 'spec.tolerations[0].effect', message: /effect must be 'NoExecute' when `tolerationSeconds` is set$/ }] },
  { name: "tolerations: the static pods' own", mutate: (p) => (p.spec.tolerations = [{ operator: 'Exists', effect: 'NoExecute' }]), want: [] },

  // volumes
  { name: 'a volume name is required', mutate: (p) => (loose(p.spec)['volumes'] = [{ emptyDir: {} }]), afterDefaults: (p) => (app(p).volumeMounts = []), want: [{ field: 'spec.volumes[0].name', message: /^Required value$/ }] },
  { name: 'a volume name must be a DNS-1123 label', mutate: (p) => p.spec.volumes?.push({ name: 'Logs', emptyDir: {} }), want: [{ field: 'spec.volumes[1].name', message: DNS_LABEL }] },
  { name: 'volume names are unique', mutate: (p) => p.spec.volumes?.push({ name: 'data', hostPath: { path: '/tmp' } }), want: [{ field: 'spec.volumes[1].name', message: /^Duplicate value: "data"$/ }] },
  { name: 'a volume has one source only', mutate: (p) => (p.spec.volumes = [{ name: 'data', emptyDir: {}, hostPath: { path: '/tmp' } }]), want: [{ field: 'spec.volumes[0].emptyDir', message: /^Forbidden: may not specify more than 1 volume type$/ }] },
  { name: 'a volume without source (an undefaulted pod)', afterDefaults: (p) => (p.spec.volumes = [{ name: 'data' }]), want: [{ field: 'spec.volumes[0]', message: /^Required value: must specify a volume type$/ }] },
  { name: 'a volume without source is an emptyDir once defaulted', mutate: (p) => (p.spec.volumes = [{ name: 'data' }]), want: [] },
  { name: 'a hostPath needs a path', mutate: (p) => (p.spec.volumes = [{ name: 'data', hostPath: { path: '' } }]), want: [{ field: 'spec.volumes[0].hostPath.path', message: /^Required value$/ }] },
  { name: "a hostPath's type must be known", mutate: (p) => (p.spec.volumes = [{ name: 'data', hostPath: { path: '/var/log', type: 'Weird' } }]), want: [{ field: 'spec.volumes[0].hostPath.type', message: /^Unsupported value: "Weird": supported values: "", "DirectoryOrCreate"/ }] },
  { name: 'a hostPath of type Directory', mutate: (p) => (p.spec.volumes = [{ name: 'data', hostPath: { path: '/var/log', type: 'Directory' } }]), want: [] },

  // volume mounts
  { name: 'a volumeMount must name a declared volume', mutate: (p) => app(p).volumeMounts?.push({ name: 'logs', mountPath: '/logs' }), want: [{ field: 'spec.containers[0].volumeMounts[1].name', message: /^Not found: "logs"$/ }] },
  { name: 'a volumeMount needs a name', mutate: (p) => (loose(app(p))['volumeMounts'] = [{ mountPath: '/data' }]), want: [{ field: 'spec.containers[0].volumeMounts[0].name', message: /^Required value$/ }] },
  { name: 'a volumeMount needs a mountPath', mutate: (p) => (loose(app(p))['volumeMounts'] = [{ name: 'data' }]), want: [{ field: 'spec.containers[0].volumeMounts[0].mountPath', message: /^Required value$/ }] },
  { name: 'a mountPath must be absolute', mutate: (p) => (app(p).volumeMounts = [{ name: 'data', mountPath: 'data' }]), want: [{ field: 'spec.containers[0].volumeMounts[0].mountPath', message: /^Invalid value: "data": must be an absolute path$/ }] },
  { name: 'mountPaths are unique within a container', mutate: (p) => app(p).volumeMounts?.push({ name: 'data', mountPath: '/data' }), want: [{ field: 'spec.containers[0].volumeMounts[1].mountPath', message: /must be unique$/ }] },
  { name: 'a subPath may not climb out', mutate: (p) => (app(p).volumeMounts = [{ name: 'data', mountPath: '/data', subPath: '../etc' }]), want: [{ field: 'spec.containers[0].volumeMounts[0].subPath', message: /must not contain '\.\.'$/ }] },
  { name: 'two containers may mount the same volume', mutate: (p) => (sidecar(p).volumeMounts = [{ name: 'data', mountPath: '/data', readOnly: true }]), want: [] },

  // env
  { name: 'an env var needs a name', mutate: (p) => (app(p).env = [{ name: '', value: 'x' }]), want: [{ field: 'spec.containers[0].env[0].name', message: /^Required value$/ }] },
  { name: "an env var name may not hold '='", mutate: (p) => (app(p).env = [{ name: 'A=B', value: 'x' }]), want: [{ field: 'spec.containers[0].env[0].name', message: /printable ASCII characters other than '='$/ }] },
  { name: 'an env var name with dots and dashes is fine', mutate: (p) => (app(p).env = [{ name: 'my.var-1', value: 'x' }]), want: [] },
  {
    name: 'an env var has value or valueFrom, not both',
    mutate: (p) => (app(p).env = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]),
    want: [{ field: 'spec.containers[0].env[0].valueFrom', message: /may not be specified when `value` is not empty$/ }],
  },
];

describe('validatePod', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = basePod();
      tc.mutate?.(raw);
      const pod = applyPodDefaults(raw);
      tc.afterDefaults?.(pod);
      const errors = validatePod(pod);
      assert.deepEqual(
        errors.map((e) => e.field),
        tc.want.map((w) => w.field),
        `errors: ${formatFieldErrors(errors)}`,
      );
      for (const [i, w] of tc.want.entries()) assert.match(errors[i]?.message ?? '', w.message);
    });
  }

  it('reports a pod without spec', () => {
    assert.deepEqual(validatePod({ metadata: { name: 'a' } } as unknown as Pod), [{ field: 'spec', message: 'Required value' }]);
  });

  it('reports every problem, not the first only', () => {
    const raw = basePod();
    delete raw.metadata.name;
    loose(app(raw))['name'] = '';
    raw.spec.restartPolicy = 'Never';
    raw.spec.activeDeadlineSeconds = -3;
    const fields = validatePod(applyPodDefaults(raw)).map((e) => e.field);
    assert.deepEqual(fields, ['metadata.name', 'spec.containers[0].name', 'spec.activeDeadlineSeconds']);
  });
});

describe('formatFieldErrors', () => {
  const cases: { name: string; errors: FieldError[]; want: string }[] = [
    { name: 'none', errors: [], want: '' },
    { name: 'one', errors: [{ field: 'spec.containers[0].name', message: 'Required value' }], want: 'spec.containers[0].name: Required value' },
    {
      name: 'several, on one line',
      errors: [
        { field: 'spec.containers[0].name', message: 'Required value' },
        { field: 'spec.restartPolicy', message: 'Unsupported value: "x": supported values: "Always"' },
      ],
      want: 'spec.containers[0].name: Required value; spec.restartPolicy: Unsupported value: "x": supported values: "Always"',
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(formatFieldErrors(tc.errors), tc.want));
});
