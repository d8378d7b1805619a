/**
 * `npm run runtime-diff`: what the CRI of containerd 2 and of containerd 1.6
 * answer differently, found by asking both the same things (ADR 0040's
 * "What differs between the runtimes").
 *
 *   npm run build && node dist/test/runtime-diff/runtime-diff.js [--runtimes containerd2,containerd1.6] [--out .tmp/runtime-diff]
 *
 * For each runtime kind in turn it makes the project's containerd that kind
 * (deploy/runtime.sh; the kind that ran before is running again at the end),
 * runs the same scenario against its CRI socket: a hostNetwork pod with one
 * busybox container, its status, stats and metrics, an exec, a resource
 * update, the container stopped, then the calls a kubelet makes on things
 * that are not there (each error code), and the event stream; then
 * removes what it made. Writes each profile (<kind>.json) and the
 * difference table (diff.md), and prints the table. Run it when no test
 * run uses the project's containerd: switching kinds stops it.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import * as cri from '@app/cri';
import { CriError, type ContainerEventResponse } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { GrpcRuntimeConnection } from '../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { REPO_ROOT } from '../../deploy/local/stack.js';
import { BENCH_COMMAND, BENCH_IMAGE } from '../bench/harness/measure.js';
import { runtimeAddress, useRuntimeKind, type RuntimeKind } from '../support/runtime.js';
import { differenceTable, shape, type ProbeResult, type RuntimeProfile } from './profile.js';

const KINDS: readonly RuntimeKind[] = ['containerd2', 'containerd1.6'];
const SANDBOX_IMAGE = 'localhost/kubelet-split/pause:3.10';

type Codec = { fromPartial(p: object): unknown };

/** The scenario against one CRI socket: each probe's outcome, by name, in order. */
export async function profileRuntime(kind: string, endpoint: string): Promise<RuntimeProfile> {
  const conn = new GrpcRuntimeConnection(endpoint);
  const probes: Record<string, ProbeResult> = {};
  const logs = mkdtempSync(join(tmpdir(), 'ks-runtime-diff-'));
  const call = async (service: 'runtime' | 'image', method: string, req: object): Promise<unknown> => {
    const codec = (cri as unknown as Record<string, Codec | undefined>)[`${method}Request`];
    if (!codec) throw new Error(`no ${method}Request in @app/cri`);
    return conn.unary(service, method, codec.fromPartial(req), 30_000);
  };
  /** One probe: the response's shape (or a part of it), or the error code. */
  const probe = async <T>(name: string, service: 'runtime' | 'image', method: string, req: object, pick: (res: T) => unknown = (r) => r): Promise<T | undefined> => {
    try {
      const res = (await call(service, method, req)) as T;
      probes[name] = { ok: true, fields: shape(pick(res)) };
      return res;
    } catch (err) {
      probes[name] = err instanceof CriError ? { ok: false, code: err.code, message: err.description } : { ok: false, code: 'client', message: (err as Error).message };
      return undefined;
    }
  };

  const uid = randomUUID();
  const name = `runtime-diff-${process.pid}`;
  const labels = { [KubeletLabels.node]: 'ks-runtime-diff', [KubeletLabels.podName]: name, [KubeletLabels.podNamespace]: 'default', [KubeletLabels.podUid]: uid };
  const config = { metadata: { name, namespace: 'default', uid, attempt: 0 }, labels, logDirectory: logs, linux: { securityContext: { namespaceOptions: { network: 'NODE' } } } };
  let sandboxId = '';
  let containerId = '';
  try {
    const version = (await probe<cri.VersionResponse>('Version', 'runtime', 'Version', {})) ?? { runtimeVersion: 'unknown' };
    await probe('Status verbose', 'runtime', 'Status', { verbose: true });
    await probe('RuntimeConfig', 'runtime', 'RuntimeConfig', {});
    await probe<cri.ListImagesResponse>('ListImages: the sandbox image', 'image', 'ListImages', {}, (r) => r.images.find((i) => i.repoTags.includes(SANDBOX_IMAGE)));
    await probe<cri.ListImagesResponse>('ListImages: an image pods use', 'image', 'ListImages', {}, (r) => r.images.find((i) => i.repoTags.includes(BENCH_IMAGE)));
    await probe('ImageStatus verbose (the sandbox image)', 'image', 'ImageStatus', { image: { image: SANDBOX_IMAGE }, verbose: true });
    await probe('ImageStatus of an image not there', 'image', 'ImageStatus', { image: { image: 'localhost/kubelet-split/nope:1' } });
    await probe('ImageFsInfo', 'image', 'ImageFsInfo', {});
    await probe('PullImage of an image no registry has', 'image', 'PullImage', { image: { image: 'localhost/kubelet-split/nope:1' } });

    const sandbox = await probe<cri.RunPodSandboxResponse>('RunPodSandbox (hostNetwork)', 'runtime', 'RunPodSandbox', { config });
    sandboxId = sandbox?.podSandboxId ?? '';
    await probe('PodSandboxStatus verbose', 'runtime', 'PodSandboxStatus', { podSandboxId: sandboxId, verbose: true });
    await probe('CreateContainer with an image not there', 'runtime', 'CreateContainer', { podSandboxId: sandboxId, sandboxConfig: config, config: { metadata: { name: 'absent', attempt: 0 }, image: { image: 'localhost/kubelet-split/nope:1' }, logPath: 'absent/0.log' } });
    const created = await probe<cri.CreateContainerResponse>('CreateContainer', 'runtime', 'CreateContainer', { podSandboxId: sandboxId, sandboxConfig: config, config: { metadata: { name: 'main', attempt: 0 }, image: { image: BENCH_IMAGE }, command: BENCH_COMMAND, labels, logPath: 'main/0.log' } });
    containerId = created?.containerId ?? '';
    await probe('ContainerStatus verbose (created)', 'runtime', 'ContainerStatus', { containerId, verbose: true });

    // The event stream, open while the container starts: the first event, or the stream's error.
    const events: ContainerEventResponse[] = [];
    const stream = conn.containerEvents((e) => events.push(e));
    const streamError = stream.done.then(
      () => undefined,
      (err: unknown) => err,
    );
    await sleep(1000);
    await probe('StartContainer', 'runtime', 'StartContainer', { containerId });
    const until = performance.now() + 5000;
    while (events.length === 0 && performance.now() < until && !(await Promise.race([streamError, sleep(50).then(() => undefined)]))) await sleep(0);
    const broke = await Promise.race([streamError, sleep(10).then(() => undefined)]);
    stream.cancel();
    if (events[0]) probes['GetContainerEvents: the first event after a start'] = { ok: true, fields: shape({ ...events[0], containersStatuses: events[0].containersStatuses.map((s) => ({ id: s.id, state: s.state })) }) };
    else if (broke instanceof CriError) probes['GetContainerEvents: the first event after a start'] = { ok: false, code: broke.code, message: broke.description };
    else probes['GetContainerEvents: the first event after a start'] = { ok: false, code: 'none', message: broke instanceof Error ? broke.message : 'no event within 5 s' };

    await probe('ContainerStatus verbose (running)', 'runtime', 'ContainerStatus', { containerId, verbose: true });
    await probe('ContainerStats', 'runtime', 'ContainerStats', { containerId });
    await probe<cri.ListContainerStatsResponse>('ListContainerStats (this container)', 'runtime', 'ListContainerStats', { filter: { id: containerId } });
    await probe('PodSandboxStats', 'runtime', 'PodSandboxStats', { podSandboxId: sandboxId });
    await probe<cri.ListPodSandboxStatsResponse>('ListPodSandboxStats (this sandbox)', 'runtime', 'ListPodSandboxStats', { filter: { id: sandboxId } });
    await probe<cri.ListMetricDescriptorsResponse>('ListMetricDescriptors', 'runtime', 'ListMetricDescriptors', {}, (r) => ({ count: r.descriptors.length, first: r.descriptors[0] }));
    await probe<cri.ListPodSandboxMetricsResponse>('ListPodSandboxMetrics', 'runtime', 'ListPodSandboxMetrics', {}, (r) => ({ first: r.podMetrics.find((m) => m.podSandboxId === sandboxId) }));
    await probe('ExecSync', 'runtime', 'ExecSync', { containerId, cmd: ['sh', '-c', 'echo out; echo err >&2; exit 3'], timeout: 10 });
    await probe('ExecSync with a timeout', 'runtime', 'ExecSync', { containerId, cmd: ['sleep', '5'], timeout: 1 });
    await probe('UpdateContainerResources (cpu shares, memory)', 'runtime', 'UpdateContainerResources', { containerId, linux: { cpuShares: 512, memoryLimitInBytes: 256 * 1024 * 1024 } });
    await probe('ReopenContainerLog', 'runtime', 'ReopenContainerLog', { containerId });
    await probe('StopContainer', 'runtime', 'StopContainer', { containerId, timeout: 5 });
    await probe('ContainerStatus verbose (exited)', 'runtime', 'ContainerStatus', { containerId, verbose: true });
    await probe('ExecSync in an exited container', 'runtime', 'ExecSync', { containerId, cmd: ['true'], timeout: 5 });
    await probe('StartContainer of an exited container', 'runtime', 'StartContainer', { containerId });

    const missing = 'f'.repeat(64);
    await probe('ContainerStatus of an unknown id', 'runtime', 'ContainerStatus', { containerId: missing });
    await probe('PodSandboxStatus of an unknown id', 'runtime', 'PodSandboxStatus', { podSandboxId: missing });
    await probe('StopContainer of an unknown id', 'runtime', 'StopContainer', { containerId: missing, timeout: 1 });
    await probe('RemoveContainer of an unknown id', 'runtime', 'RemoveContainer', { containerId: missing });
    await probe('StopPodSandbox of an unknown id', 'runtime', 'StopPodSandbox', { podSandboxId: missing });
    await probe('RemovePodSandbox of an unknown id', 'runtime', 'RemovePodSandbox', { podSandboxId: missing });
    await probe('ContainerStats of an unknown id', 'runtime', 'ContainerStats', { containerId: missing });
    await probe('RemoveImage of an image not there', 'image', 'RemoveImage', { image: { image: 'localhost/kubelet-split/nope:1' } });

    await probe('RemoveContainer', 'runtime', 'RemoveContainer', { containerId });
    containerId = '';
    await probe('StopPodSandbox', 'runtime', 'StopPodSandbox', { podSandboxId: sandboxId });
    await probe('PodSandboxStatus (not ready)', 'runtime', 'PodSandboxStatus', { podSandboxId: sandboxId });
    await probe('RemovePodSandbox', 'runtime', 'RemovePodSandbox', { podSandboxId: sandboxId });
    sandboxId = '';
    return { kind, version: version.runtimeVersion, probes };
  } finally {
    if (containerId) await call('runtime', 'RemoveContainer', { containerId }).catch(() => undefined);
    if (sandboxId) {
      await call('runtime', 'StopPodSandbox', { podSandboxId: sandboxId }).catch(() => undefined);
      await call('runtime', 'RemovePodSandbox', { podSandboxId: sandboxId }).catch(() => undefined);
    }
    conn.close();
    rmSync(logs, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runtimes: { type: 'string', default: KINDS.join(',') }, out: { type: 'string', default: join(REPO_ROOT, '.tmp', 'runtime-diff') } } });
  const kinds = (values.runtimes ?? '').split(',').map((s) => s.trim());
  const unknown = kinds.filter((k) => !(KINDS as readonly string[]).includes(k));
  if (kinds.length !== 2 || unknown.length > 0) {
    process.stderr.write(`runtime-diff: --runtimes takes two of ${KINDS.join(', ')}, comma-separated, got "${values.runtimes}"\n`);
    process.exit(2);
  }
  const out = resolve(values.out ?? '.tmp/runtime-diff');
  mkdirSync(out, { recursive: true });
  const log = (line: string) => process.stderr.write(`runtime-diff ${line}\n`);
  const profiles: RuntimeProfile[] = [];
  for (const kind of kinds as RuntimeKind[]) {
    const restore = useRuntimeKind(kind, log);
    try {
      log(`${kind}: probing ${runtimeAddress()}`);
      const p = await profileRuntime(kind, `unix://${runtimeAddress()}`);
      writeFileSync(join(out, `${kind}.json`), `${JSON.stringify(p, null, 2)}\n`);
      profiles.push(p);
    } finally {
      restore();
    }
  }
  const [a, b] = profiles;
  if (!a || !b) throw new Error('a runtime was not probed');
  const table = differenceTable(a, b);
  writeFileSync(join(out, 'diff.md'), table);
  process.stdout.write(`${table}\nwrote ${join(out, `${a.kind}.json`)}, ${b.kind}.json and diff.md\n`);
}

if (process.argv[1]?.endsWith('runtime-diff.js')) {
  main().catch((err: unknown) => {
    process.stderr.write(`runtime-diff: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
