/**
 * config-source's contract, checked from outside (pkg/kubelet/config): it
 * watches the static pod manifests (and the http and api sources when they
 * are configured) and
 *  - publishes each change on `kubelet.<node>.config.<op>` (add, update,
 *    remove, reconcile, delete) with the source's name and the pods, a static
 *    pod named `<name>-<node>`, its UID the digest of the manifest
 *    (annotation kubernetes.io/config.hash), kubernetes.io/config.source
 *    `file`;
 *  - says once each source delivered a full listing on
 *    `kubelet.<node>.config.ready`;
 *  - answers `kubelet.<node>.sources.snapshot` with every source's pods;
 *  - refuses a broken manifest with a FailedToAdmitStaticPod Warning event
 *    on the Node naming the file, and keeps every other pod;
 *  - keeps a pod's UID across its own restart.
 * Needs the node's manifest directory (--manifests): the kit writes and
 * removes its own files there (kit-*.yaml).
 */
import { randomUUID } from 'node:crypto';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Msg } from '@nats-io/transport-node';
import { MessageTypes, Subjects, type EventMessage, type Pod, type PodUpdateMessage, type SourcesSnapshotMessage } from '@app/contracts';
import { ConfigHashAnnotation, ConfigSourceAnnotation } from '@app/kube';
import { KitFailure, expectWithin, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

function manifest(name: string, extra = ''): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  hostNetwork: true\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n${extra}`;
}

/** Every pod update and Node event config-source sends while a check runs. */
class Heard {
  readonly updates: PodUpdateMessage[] = [];
  readonly nodeEvents: EventMessage[] = [];
  private readonly subs: { unsubscribe(): void }[] = [];
  constructor(t: KitTarget) {
    const parse = <T>(m: Msg): T | undefined => {
      try {
        return JSON.parse(dec.decode(m.data)) as T;
      } catch {
        return undefined;
      }
    };
    this.subs.push(
      t.nc.subscribe(Subjects.podUpdate.wildcard(t.node), { callback: (_e, m) => void ((u) => u?.type === MessageTypes.podUpdate && this.updates.push(u))(parse<PodUpdateMessage>(m)) }),
      t.nc.subscribe(Subjects.events.wildcard(t.node), { callback: (_e, m) => void ((e) => e?.involvedObject.kind === 'Node' && this.nodeEvents.push(e))(parse<EventMessage>(m)) }),
    );
  }
  /** The pods named `name` in updates of one of `ops`. */
  pods(name: string, ops: readonly string[]): { op: string; source: string; pod: Pod }[] {
    return this.updates.flatMap((u) => (ops.includes(u.op) ? u.pods.filter((p) => p.metadata.name === name).map((pod) => ({ op: u.op, source: u.source, pod })) : []));
  }
  seen(name: string): string {
    const mine = this.updates.flatMap((u) => u.pods.filter((p) => p.metadata.name === name).map((p) => `${u.op} ${u.source} ${p.metadata.uid ?? '?'}`));
    return mine.length === 0 ? `no update naming ${name} (${this.updates.length} updates heard)` : mine.join(', ');
  }
  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }
}

function manifestsOf(t: KitTarget): string {
  if (!t.manifests) throw new KitFailure('config-source needs the node\'s manifest directory (--manifests DIR)');
  return t.manifests;
}

async function snapshot(t: KitTarget): Promise<SourcesSnapshotMessage> {
  const m = await t.nc.request(Subjects.sourcesSnapshot.build(t.node), enc.encode('{}'), { timeout: t.timeoutMs });
  return JSON.parse(dec.decode(m.data)) as SourcesSnapshotMessage;
}

/** A kit manifest, written, and removed when `fn` ends. */
async function withManifest(t: KitTarget, fn: (file: string, base: string, podName: string, heard: Heard) => Promise<void>): Promise<void> {
  const base = `kit-${randomUUID().slice(0, 8)}`;
  const file = join(manifestsOf(t), `${base}.yaml`);
  const heard = new Heard(t);
  await t.nc.flush();
  try {
    writeFileSync(file, manifest(base));
    await fn(file, base, `${base}-${t.node}`, heard);
  } finally {
    heard.stop();
    try {
      unlinkSync(file);
    } catch {
      // removed by the check
    }
  }
}

async function added(t: KitTarget, heard: Heard, podName: string): Promise<Pod> {
  return (await expectWithin(`an add (or reconcile) of static pod ${podName} from source file on ${Subjects.podUpdate.wildcard(t.node)}`, () => heard.pods(podName, ['add', 'reconcile', 'update']).find((p) => p.source === 'file'), t.timeoutMs, () => heard.seen(podName))).pod;
}

export const CONFIG_SOURCE_CHECKS: readonly KitCheck[] = [
  {
    name: 'a manifest written: its pod added from source file, named <name>-<node>, its UID the config.hash',
    async run(t, note) {
      await withManifest(t, async (_file, _base, podName, heard) => {
        const pod = await added(t, heard, podName);
        const a = pod.metadata.annotations ?? {};
        if (!pod.metadata.uid || a[ConfigHashAnnotation] !== pod.metadata.uid) throw new KitFailure(`the pod's ${ConfigHashAnnotation} annotation is not its UID: uid ${pod.metadata.uid ?? 'none'}, annotation ${a[ConfigHashAnnotation] ?? 'none'}`);
        if (a[ConfigSourceAnnotation] !== 'file') throw new KitFailure(`the pod's ${ConfigSourceAnnotation} annotation is ${JSON.stringify(a[ConfigSourceAnnotation] ?? null)}, not "file"`);
        note(`heard: ${heard.seen(podName)}`);
      });
    },
  },
  {
    name: 'a manifest edited: a new UID added, the old one removed; a manifest removed: its pod removed',
    async run(t, note) {
      await withManifest(t, async (file, base, podName, heard) => {
        const first = await added(t, heard, podName);
        writeFileSync(file, manifest(base, '  terminationGracePeriodSeconds: 3\n'));
        const second = await expectWithin(`an add of ${podName} under a new UID after the edit`, () => heard.pods(podName, ['add', 'reconcile', 'update']).find((p) => p.pod.metadata.uid !== first.metadata.uid)?.pod, t.timeoutMs, () => heard.seen(podName));
        await expectWithin(`a remove (or delete) of ${podName} UID ${first.metadata.uid ?? ''} after the edit`, () => heard.pods(podName, ['remove', 'delete']).find((p) => p.pod.metadata.uid === first.metadata.uid), t.timeoutMs, () => heard.seen(podName));
        unlinkSync(file);
        await expectWithin(`a remove (or delete) of ${podName} UID ${second.metadata.uid ?? ''} after its manifest was removed`, () => heard.pods(podName, ['remove', 'delete']).find((p) => p.pod.metadata.uid === second.metadata.uid), t.timeoutMs, () => heard.seen(podName));
        note(`heard: ${heard.seen(podName)}`);
      });
    },
  },
  {
    name: 'a broken manifest: a FailedToAdmitStaticPod Warning event on the Node naming the file, and no other pod removed',
    async run(t, note) {
      await withManifest(t, async (_file, _base, podName, heard) => {
        const good = await added(t, heard, podName);
        const broken = join(manifestsOf(t), `kit-broken-${randomUUID().slice(0, 8)}.yaml`);
        try {
          writeFileSync(broken, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers: [{name: "", image: ""}]\n');
          const ev = await expectWithin(`a FailedToAdmitStaticPod Warning event on the Node naming ${broken}`, () => heard.nodeEvents.find((e) => e.reason === 'FailedToAdmitStaticPod' && e.eventType === 'Warning' && e.message.includes(broken)), t.timeoutMs, () => heard.nodeEvents.map((e) => `${e.reason}: ${e.message}`).join('; ') || 'no Node event');
          const removed = heard.pods(podName, ['remove', 'delete']).filter((p) => p.pod.metadata.uid === good.metadata.uid);
          if (removed.length > 0) throw new KitFailure(`the good pod ${podName} was removed after a broken manifest appeared beside it`);
          const snap = await snapshot(t);
          if (!snap.sources.some((s) => s.pods.some((p) => p.metadata.uid === good.metadata.uid))) throw new KitFailure(`the snapshot no longer has ${podName} after a broken manifest appeared beside it`);
          note(`event: ${ev.message}`);
        } finally {
          unlinkSync(broken);
        }
      });
    },
  },
  {
    name: 'sources.snapshot: every source with its pods, the file source ready',
    async run(t, note) {
      await withManifest(t, async (_file, _base, podName, heard) => {
        const pod = await added(t, heard, podName);
        const snap = await snapshot(t);
        if (snap.type !== MessageTypes.sourcesSnapshot) throw new KitFailure(`the snapshot's type is ${JSON.stringify(snap.type)}`);
        const file = snap.sources.find((s) => s.source === 'file');
        if (!file?.ready) throw new KitFailure(`the snapshot has no ready file source: ${JSON.stringify(snap.sources.map((s) => ({ source: s.source, ready: s.ready, pods: s.pods.length })))}`);
        if (!file.pods.some((p) => p.metadata.uid === pod.metadata.uid)) throw new KitFailure(`the snapshot's file source does not list ${podName} (${pod.metadata.uid ?? ''})`);
        note(`sources: ${snap.sources.map((s) => `${s.source}${s.ready ? ' (ready)' : ''} ${s.pods.length} pod(s)`).join(', ')}`);
      });
    },
  },
  {
    name: 'bad input on the snapshot subject: an answer or an error reply, and it goes on answering',
    async run(t, note) {
      for (const junk of ['{not json', '[]', JSON.stringify({ type: 'kubelet.v9.unknown' })]) {
        const m = await t.nc.request(Subjects.sourcesSnapshot.build(t.node), enc.encode(junk), { timeout: t.timeoutMs });
        const reply = JSON.parse(dec.decode(m.data)) as { type?: string; error?: unknown };
        if (reply.type !== MessageTypes.sourcesSnapshot && !reply.error) throw new KitFailure(`${junk} on ${Subjects.sourcesSnapshot.build(t.node)}: neither a snapshot nor an error reply: ${dec.decode(m.data).slice(0, 200)}`);
      }
      await snapshot(t);
      note('3 bad requests answered; a snapshot after them');
    },
  },
  {
    name: 'restarted: the same pod under the same UID in its snapshot',
    needsRestart: true,
    async run(t, note) {
      await withManifest(t, async (_file, _base, podName, heard) => {
        const pod = await added(t, heard, podName);
        await t.restart?.();
        const again = await expectWithin(`${podName} (${pod.metadata.uid ?? ''}) in the snapshot after the restart`, async () => {
          const snap = await snapshot(t);
          return snap.sources.find((s) => s.source === 'file' && s.ready)?.pods.find((p) => p.metadata.name === podName);
        }, t.timeoutMs);
        if (again.metadata.uid !== pod.metadata.uid) throw new KitFailure(`${podName} has UID ${again.metadata.uid ?? ''} after the restart, ${pod.metadata.uid ?? ''} before`);
        note(`UID ${pod.metadata.uid ?? ''} kept`);
      });
    },
  },
];
