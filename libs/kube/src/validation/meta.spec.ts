import { describe } from 'node:test';
import { type Case, DNS_LABEL, DNS_SUBDOMAIN, runCases } from './validation.testing.js';

const cases: Case[] = [
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
];

describe('validatePod: metadata', () => {
  runCases(cases);
});
