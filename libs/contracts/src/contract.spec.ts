import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type ContractFamily } from './contract.js';
import { MESSAGE_FIELDS, MessageTypes, decodeMessage, messageSchema } from './messages.js';
import { SERVICE_NAMES } from './services.js';
import { Subjects, subjectMatches } from './subjects.js';

/** The address with each parameter as `*`, for node `n`: what the family subscribes to. */
const asWildcard = (address: string) => address.replace('{node}', 'n').replaceAll(/\{[^}]+\}/g, '*');

/** One subject each family builds, for node `n`. */
const built: Record<ContractFamily, string> = {
  podUpdate: Subjects.podUpdate.build('n', 'add'),
  sourcesReady: Subjects.sourcesReady.build('n'),
  sourcesSnapshot: Subjects.sourcesSnapshot.build('n'),
  pleg: Subjects.pleg.build('n', 'u1'),
  plegInspect: Subjects.plegInspect.build('n', 'u1'),
  probeResult: Subjects.probeResult.build('n', 'readiness', 'u1'),
  work: Subjects.work.build('n', 3, 'u1'),
  workDone: Subjects.workDone.build('n', 'u1'),
  status: Subjects.status.build('n', 'SetPodStatus', 'u1'),
  prober: Subjects.prober.build('n', 'AddPod'),
  events: Subjects.events.build('n', 'u1'),
  criRuntime: Subjects.criRuntime.build('n', 'Version'),
  criImage: Subjects.criImage.build('n', 'ListImages'),
  serviceInfo: Subjects.serviceInfo.build('n', 'pleg'),
  criEvents: Subjects.criEvents.build('n'),
  criEventsStatus: Subjects.criEventsStatus.build('n'),
  apiObject: Subjects.apiObject.build('n'),
  serviceAccountToken: Subjects.serviceAccountToken.build('n'),
  serviceList: Subjects.serviceList.build('n'),
  podResync: Subjects.podResync.build('n'),
  podEvents: Subjects.podEvents.build('n'),
  nodeConditions: Subjects.nodeConditions.build('n'),
  trace: Subjects.trace.build('n', 'pleg', 'u1'),
};

describe('the contract table (contract.ts) against the subject families', () => {
  for (const family of Object.keys(CHANNELS) as ContractFamily[]) {
    const c = CHANNELS[family];
    it(`${family}: ${c.address}`, () => {
      const f = Subjects[family] as { wildcard?: (node: string, ...rest: never[]) => string; pattern?: unknown };
      // The address, parameters made `*`, is the family's subscription (work: per shard, so its pattern's shape).
      const expected = family === 'work' ? 'kubelet.n.work.*.*' : family === 'probeResult' ? Subjects.probeResult.wildcard('n') : family === 'trace' ? Subjects.trace.wildcard('n') : (f.wildcard as (node: string) => string)('n');
      assert.equal(asWildcard(c.address), expected);
      assert.ok(subjectMatches(asWildcard(c.address), built[family]), `${built[family]} is on ${c.address}`);
      const params = [...c.address.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(Object.keys(c.parameters).sort(), [...params].sort());
    });
  }

  it('a parameter with fixed values lists the values the family parses', () => {
    assert.deepEqual(CHANNELS.trace.parameters['service']?.enum, SERVICE_NAMES);
    for (const verb of CHANNELS.status.parameters['verb']?.enum ?? []) assert.equal(Subjects.status.parse(`kubelet.n.status.${verb}.u1`)?.verb, verb);
    assert.equal(Subjects.status.parse('kubelet.n.status.Nope.u1'), undefined);
  });
});

describe('the field specs are the decoder and the schema', () => {
  it('a message missing a checked field is refused, and the field is required in the schema', () => {
    for (const t of Object.values(MessageTypes)) {
      const fields = MESSAGE_FIELDS[t] as Record<string, { check?: unknown; optional: boolean }>;
      const required = (messageSchema(t)['required'] as string[] | undefined) ?? [];
      for (const [name, f] of Object.entries(fields)) {
        if (f.check) assert.ok(required.includes(name), `${t}.${name} is checked, so required`);
        assert.equal(required.includes(name), !f.optional, `${t}.${name}`);
      }
    }
    assert.throws(() => decodeMessage(MessageTypes.workAccepted, { type: MessageTypes.workAccepted, podUid: 'u' }), /field "shard" must be a number/);
  });
});
