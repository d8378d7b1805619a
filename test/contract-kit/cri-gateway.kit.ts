/**
 * cri-gateway's contract, checked from outside: the CRI's RuntimeService
 * and ImageService as request/reply on `cri.<node>.runtime.<Method>` and
 * `cri.<node>.image.<Method>` (JSON of the CRI's messages, camelCase field
 * names as protobuf's JSON mapping gives them); a failure is a reply
 * `{"error": {"code", "description"}}` with the gRPC status code's name,
 * never silence; bad input is InvalidArgument naming the field, an unknown
 * method Unimplemented; it goes on answering after bad input and after a
 * restart.
 */
import { randomUUID } from 'node:crypto';
import { CriError, type CriInput, type PodSandboxConfig } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { KitFailure, expectWithin, kitSandboxConfig, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

function sandboxConfig(t: KitTarget, name: string): CriInput<PodSandboxConfig> {
  const uid = randomUUID();
  return kitSandboxConfig(t, uid, `kit-${name}-${uid.slice(0, 8)}`);
}

/** The error a call must fail with: its code, and its description matching `re`. */
async function expectCriError(what: string, call: Promise<unknown>, code: string, re?: RegExp): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (err instanceof CriError && err.code === code && (!re || re.test(err.description))) return;
    throw new KitFailure(`${what}: expected a ${code} error${re ? ` matching ${re}` : ''}, got ${err instanceof Error ? err.message : String(err)}`);
  }
  throw new KitFailure(`${what}: expected a ${code} error, got an answer`);
}

async function raw(t: KitTarget, subject: string, body: string): Promise<{ error?: { code?: string; description?: string } }> {
  const m = await t.nc.request(subject, enc.encode(body), { timeout: t.timeoutMs });
  return JSON.parse(dec.decode(m.data)) as { error?: { code?: string; description?: string } };
}

export const CRI_GATEWAY_CHECKS: readonly KitCheck[] = [
  {
    name: 'Version and Status: the runtime behind it, CRI v1, RuntimeReady',
    async run(t, note) {
      const v = await t.cri.runtime('Version', { version: 'v1' });
      if (v.runtimeApiVersion !== 'v1' || !v.runtimeName) throw new KitFailure(`Version: expected runtimeApiVersion v1 and a runtimeName, got ${JSON.stringify(v)}`);
      const s = await t.cri.runtime('Status', { verbose: false });
      const ready = s.status?.conditions?.find((c) => c.type === 'RuntimeReady');
      if (!ready?.status) throw new KitFailure(`Status: RuntimeReady is not true: ${JSON.stringify(s.status?.conditions ?? [])}`);
      note(`${v.runtimeName} ${v.runtimeVersion}, ${(s.status?.conditions ?? []).map((c) => `${c.type}=${String(c.status)}`).join(' ')}`);
    },
  },
  {
    name: 'a pod through its whole life: sandbox, container, ExecSync, stop, remove, each read back',
    async run(t, note) {
      const config = sandboxConfig(t, 'life');
      const { podSandboxId } = await t.cri.runtime('RunPodSandbox', { config });
      try {
        const sb = await t.cri.runtime('PodSandboxStatus', { podSandboxId });
        if (sb.status?.state !== 'SANDBOX_READY') throw new KitFailure(`PodSandboxStatus after RunPodSandbox: ${sb.status?.state ?? 'no status'}, expected SANDBOX_READY`);
        const { containerId } = await t.cri.runtime('CreateContainer', {
          podSandboxId,
          config: { metadata: { name: 'main', attempt: 0 }, image: { image: IMAGE }, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'], labels: { [KubeletLabels.containerName]: 'main', [KubeletLabels.node]: t.node }, logPath: 'main.log' },
          sandboxConfig: config,
        });
        await t.cri.runtime('StartContainer', { containerId });
        const running = await t.cri.runtime('ContainerStatus', { containerId });
        if (running.status?.state !== 'CONTAINER_RUNNING') throw new KitFailure(`ContainerStatus after StartContainer: ${running.status?.state ?? 'no status'}`);
        const listed = await t.cri.runtime('ListContainers', { filter: { podSandboxId } });
        if (!listed.containers.some((c) => c.id === containerId)) throw new KitFailure(`ListContainers filtered by podSandboxId does not list ${containerId}`);
        const exec = await t.cri.runtime('ExecSync', { containerId, cmd: ['sh', '-c', 'echo kit; exit 4'], timeout: '10' });
        const stdout = typeof exec.stdout === 'string' ? Buffer.from(exec.stdout, 'base64').toString() : dec.decode(exec.stdout);
        if (exec.exitCode !== 4 || stdout.trim() !== 'kit') throw new KitFailure(`ExecSync: expected exit 4 and stdout "kit", got exit ${exec.exitCode} and ${JSON.stringify(stdout)}`);
        await t.cri.runtime('StopContainer', { containerId, timeout: '5' });
        const exited = await t.cri.runtime('ContainerStatus', { containerId });
        if (exited.status?.state !== 'CONTAINER_EXITED') throw new KitFailure(`ContainerStatus after StopContainer: ${exited.status?.state ?? 'no status'}`);
        await t.cri.runtime('RemoveContainer', { containerId });
        await expectCriError('ContainerStatus of a removed container', t.cri.runtime('ContainerStatus', { containerId }), 'NotFound');
        note(`sandbox ${podSandboxId.slice(0, 12)}, container ${containerId.slice(0, 12)}: ExecSync exit ${exec.exitCode}, stopped with exit ${exited.status.exitCode}`);
      } finally {
        await t.cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
        await t.cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
      }
      await expectCriError('PodSandboxStatus of a removed sandbox', t.cri.runtime('PodSandboxStatus', { podSandboxId }), 'NotFound');
    },
  },
  {
    name: 'the image service: ListImages and ImageStatus of an image the node has, an absent one has no image',
    async run(t, note) {
      const list = await t.cri.image('ListImages', {});
      const found = list.images.find((i) => i.repoTags.includes(IMAGE));
      if (!found) throw new KitFailure(`ListImages does not list ${IMAGE} (${list.images.length} images)`);
      const st = await t.cri.image('ImageStatus', { image: { image: IMAGE } });
      if (st.image?.id !== found.id) throw new KitFailure(`ImageStatus of ${IMAGE}: id ${st.image?.id ?? 'none'}, ListImages says ${found.id}`);
      const absent = await t.cri.image('ImageStatus', { image: { image: 'localhost/contract-kit/absent:none' } });
      if (absent.image) throw new KitFailure(`ImageStatus of an absent image gave ${JSON.stringify(absent.image)}`);
      note(`${list.images.length} images; ${IMAGE} is ${found.id.slice(0, 19)}`);
    },
  },
  {
    name: 'bad input: an error reply naming what is wrong (InvalidArgument, Unimplemented, NotFound), and it goes on answering',
    async run(t, note) {
      const cases = [
        { subject: `cri.${t.node}.runtime.ListContainers`, body: '{not json', code: 'InvalidArgument' },
        { subject: `cri.${t.node}.runtime.StopContainer`, body: '{"containerId": 42}', code: 'InvalidArgument', re: /containerId/ },
        { subject: `cri.${t.node}.runtime.RemovePodSandbox`, body: '{}', code: 'InvalidArgument', re: /podSandboxId/ },
        { subject: `cri.${t.node}.runtime.NoSuchMethod`, body: '{}', code: 'Unimplemented', re: /NoSuchMethod/ },
        { subject: `cri.${t.node}.image.PullImage`, body: '[]', code: 'InvalidArgument' },
        { subject: `cri.${t.node}.runtime.ContainerStatus`, body: '{"containerId":"does-not-exist"}', code: 'NotFound', re: /does-not-exist/ },
      ];
      for (const c of cases) {
        const reply = await raw(t, c.subject, c.body);
        if (reply.error?.code !== c.code || (c.re && !c.re.test(reply.error.description ?? ''))) throw new KitFailure(`${c.subject} ${c.body}: expected an error reply ${c.code}${c.re ? ` naming ${c.re}` : ''}, got ${JSON.stringify(reply)}`);
      }
      await t.cri.runtime('Version', { version: 'v1' });
      note(`${cases.length} bad requests, each answered with its error; Version answered after them`);
    },
  },
  {
    name: 'restarted: it answers again',
    needsRestart: true,
    async run(t, note) {
      const started = performance.now();
      await t.restart?.();
      await expectWithin('Version answered after the restart', () => t.cri.runtime('Version', { version: 'v1' }).then((v) => v.runtimeName || undefined), t.timeoutMs);
      note(`answered ${Math.round(performance.now() - started)} ms after the restart began`);
    },
  },
];
