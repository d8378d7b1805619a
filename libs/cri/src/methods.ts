/**
 * Facts about each CRI method that both sides of the gateway need: the
 * kubelet's metric label for it (operation_type, as in
 * pkg/kubelet/kuberuntime/instrumented_services.go) and which deadline
 * applies to it; and how a call's deadline travels with it.
 */
import type { ImageMethod, RuntimeMethod, CriService } from './messages.js';

/**
 * Which deadline a call gets:
 * - `list`: reads (Version, Status, List*, *Status, *Stats, ImageFsInfo, RuntimeConfig): the short timeout;
 * - `default`: everything that changes the runtime: the runtime request timeout (2m, like the kubelet's);
 * - `exec`: ExecSync: its own timeout plus the runtime request timeout, as the kubelet's remote client does;
 * - `stop`: StopContainer: its grace period (`timeout`, seconds) plus the runtime request timeout, as the
 *   kubelet's remote client does ("leave extra time for SIGKILL container and request latency"), so that a
 *   pod with a grace period longer than the request timeout can still be stopped;
 * - `pull`: PullImage: the image pull timeout, so an unreachable registry fails instead of hanging.
 */
export type DeadlineClass = 'list' | 'default' | 'exec' | 'stop' | 'pull';

export interface MethodInfo {
  operation: string;
  deadline: DeadlineClass;
}

export const RUNTIME_METHOD_INFO: Readonly<Record<RuntimeMethod, MethodInfo>> = {
  Version: { operation: 'version', deadline: 'list' },
  RunPodSandbox: { operation: 'run_podsandbox', deadline: 'default' },
  StopPodSandbox: { operation: 'stop_podsandbox', deadline: 'default' },
  RemovePodSandbox: { operation: 'remove_podsandbox', deadline: 'default' },
  PodSandboxStatus: { operation: 'podsandbox_status', deadline: 'list' },
  ListPodSandbox: { operation: 'list_podsandbox', deadline: 'list' },
  CreateContainer: { operation: 'create_container', deadline: 'default' },
  StartContainer: { operation: 'start_container', deadline: 'default' },
  StopContainer: { operation: 'stop_container', deadline: 'stop' },
  RemoveContainer: { operation: 'remove_container', deadline: 'default' },
  ListContainers: { operation: 'list_containers', deadline: 'list' },
  ContainerStatus: { operation: 'container_status', deadline: 'list' },
  UpdateContainerResources: { operation: 'update_container', deadline: 'default' },
  ReopenContainerLog: { operation: 'reopen_container_log', deadline: 'default' },
  ExecSync: { operation: 'exec_sync', deadline: 'exec' },
  Exec: { operation: 'exec', deadline: 'default' },
  Attach: { operation: 'attach', deadline: 'default' },
  PortForward: { operation: 'port_forward', deadline: 'default' },
  ContainerStats: { operation: 'container_stats', deadline: 'list' },
  ListContainerStats: { operation: 'list_container_stats', deadline: 'list' },
  PodSandboxStats: { operation: 'podsandbox_stats', deadline: 'list' },
  ListPodSandboxStats: { operation: 'list_podsandbox_stats', deadline: 'list' },
  UpdateRuntimeConfig: { operation: 'update_runtime_config', deadline: 'default' },
  Status: { operation: 'status', deadline: 'list' },
  // The kubelet gives CheckpointContainer the larger of its own timeout and the request timeout; here, the request timeout.
  CheckpointContainer: { operation: 'checkpoint_container', deadline: 'default' },
  ListMetricDescriptors: { operation: 'list_metric_descriptors', deadline: 'list' },
  ListPodSandboxMetrics: { operation: 'list_podsandbox_metrics', deadline: 'list' },
  RuntimeConfig: { operation: 'runtime_config', deadline: 'list' },
  UpdatePodSandboxResources: { operation: 'update_podsandbox_resources', deadline: 'default' },
};

export const IMAGE_METHOD_INFO: Readonly<Record<ImageMethod, MethodInfo>> = {
  ListImages: { operation: 'list_images', deadline: 'list' },
  ImageStatus: { operation: 'image_status', deadline: 'list' },
  PullImage: { operation: 'pull_image', deadline: 'pull' },
  RemoveImage: { operation: 'remove_image', deadline: 'default' },
  ImageFsInfo: { operation: 'image_fs_info', deadline: 'list' },
};

export function methodInfo(service: CriService, method: string): MethodInfo | undefined {
  const table: Readonly<Record<string, MethodInfo>> = service === 'runtime' ? RUNTIME_METHOD_INFO : IMAGE_METHOD_INFO;
  return Object.hasOwn(table, method) ? table[method] : undefined;
}

export interface CriTimeouts {
  /** Calls that change the runtime (the kubelet's --runtime-request-timeout, 2m). */
  requestMs: number;
  /** Reads: list, status, stats, version. */
  listMs: number;
  /** PullImage. */
  pullMs: number;
}

export const DEFAULT_CRI_TIMEOUTS: CriTimeouts = { requestMs: 120_000, listMs: 30_000, pullMs: 120_000 };

/** The deadline of one call, in ms from now. */
export function deadlineMs(info: MethodInfo, request: unknown, t: CriTimeouts): number {
  switch (info.deadline) {
    case 'list':
      return t.listMs;
    case 'default':
      return t.requestMs;
    case 'pull':
      return t.pullMs;
    case 'exec':
    case 'stop': {
      // Both carry their own timeout in seconds (an int64, so a string in the CRI's JSON).
      const seconds = Number((request as { timeout?: unknown } | null)?.timeout ?? 0);
      return (Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0) + t.requestMs;
    }
  }
}

/**
 * The NATS header in which a CRI call carries its deadline, in milliseconds
 * from when it was sent: the caller owns the deadline, as a Go context's does
 * in gRPC's `grpc-timeout`, and the cri-gateway makes it the gRPC deadline.
 * Calls without it (curl over HTTP) get the gateway's own timeouts.
 */
export const CRI_TIMEOUT_HEADER = 'Cri-Timeout-Ms';

/**
 * The deadline a CRI_TIMEOUT_HEADER value asks for; undefined when there is
 * none; a CriError-worthy message (string) when it is not a positive number.
 */
export function parseCriTimeout(value: string | undefined | null): { ms?: number; problem?: string } {
  if (value === undefined || value === null || value === '') return {};
  const ms = Number(value);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(value) || !Number.isFinite(ms) || ms <= 0) {
    return { problem: `the ${CRI_TIMEOUT_HEADER} header must be a positive number of milliseconds, got "${value}"` };
  }
  return { ms };
}

/**
 * The NATS header in which a caller asks for signs of life while its call
 * runs: every that many milliseconds the cri-gateway sends an empty message
 * carrying this header to the call's reply subject, until the answer. A
 * caller that hears nothing for CRI_PROGRESS_STALL_MS gives the call up with
 * Unavailable, as gRPC fails a call whose connection breaks: the gateway
 * that took it died (SIGKILL, a crash) or the request never reached one. It
 * does not wait out the whole deadline (2 minutes for a change).
 */
export const CRI_PROGRESS_HEADER = 'Cri-Progress-Ms';
/** How often a caller asks the gateway to show progress. */
export const CRI_PROGRESS_INTERVAL_MS = 1000;
/** How long a caller waits for an answer or a sign of progress before it gives the call up. */
export const CRI_PROGRESS_STALL_MS = 5000;

/** The progress interval a CRI_PROGRESS_HEADER value asks for, kept within 100 ms..60 s; undefined when none or unreadable. */
export function parseCriProgress(value: string | undefined | null): number | undefined {
  if (value === undefined || value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Math.min(60_000, Math.max(100, Number(value)));
}
