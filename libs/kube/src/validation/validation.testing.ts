/**
 * Fixtures for the validation specs: a valid base pod touching every rule,
 * and the table runner (mutate the pod as read, default it, validate, compare
 * the fields exactly and the messages by pattern).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@app/contracts';
import { applyPodDefaults } from '../defaults.js';
import { formatFieldErrors } from './field.js';
import { validatePod } from './spec.js';

/** A valid pod touching every rule: two containers, an init container, a volume, probes, a hook. */
export function basePod(): Pod {
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
export type Loose = Record<string, unknown>;
export const loose = (v: object): Loose => v as Loose;
export const app = (p: Pod): Container => {
  const c = p.spec.containers[0];
  assert.ok(c);
  return c;
};
export const sidecar = (p: Pod): Container => {
  const c = p.spec.containers[1];
  assert.ok(c);
  return c;
};
export const init = (p: Pod): Container => {
  const c = p.spec.initContainers?.[0];
  assert.ok(c);
  return c;
};

export interface Case {
  name: string;
  /** Changes the pod as read, before the defaults. */
  mutate?: (p: Pod) => void;
  /** Changes the defaulted pod (for what defaulting would otherwise repair). */
  afterDefaults?: (p: Pod) => void;
  /** The errors, in order: the field exactly, the message by pattern. Empty: the pod is valid. */
  want: { field: string; message: RegExp }[];
}

export const DNS_LABEL = /^Invalid value: .*a lowercase RFC 1123 label must consist of/;
export const DNS_SUBDOMAIN = /^Invalid value: .*a lowercase RFC 1123 subdomain must consist of/;

/** One `it` per case. */
export function runCases(cases: readonly Case[]): void {
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
}
