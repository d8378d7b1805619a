import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { applyPodDefaults } from '../defaults.js';
import { validatePod } from './spec.js';
import { app, basePod, type Case, DNS_LABEL, loose, runCases } from './validation.testing.js';

const cases: Case[] = [
  { name: 'the base pod is valid', want: [] },

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
];

describe('validatePod: the pod spec', () => {
  runCases(cases);

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
