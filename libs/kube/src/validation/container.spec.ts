import { describe } from 'node:test';
import { app, type Case, DNS_LABEL, init, loose, runCases, sidecar } from './validation.testing.js';

const cases: Case[] = [
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

describe('validatePod: containers', () => {
  runCases(cases);
});
