/**
 * The legacy container log symlinks (pkg/kubelet/kuberuntime/legacy.go):
 * `/var/log/containers/<pod>_<namespace>_<container>-<containerID>.log`
 * pointing at the container's log file under /var/log/pods, for the log
 * shippers (Fluent Bit, Promtail, Fluentd, the Datadog and Elastic agents)
 * that read that directory and take the pod, namespace and container from
 * the file's name.
 */
import { join } from 'node:path';

/** legacyContainerLogsDir: where the kubelet links every container's log. */
export const LEGACY_CONTAINER_LOGS_DIR = '/var/log/containers';
const SUFFIX = '.log';
/** ext4MaxFileNameLen: the name is cut to it, suffix included. */
const MAX_FILE_NAME = 255;

/** logSymlink: `<dir>/<pod>_<namespace>_<container>-<id>.log`, its name at most 255 bytes. */
export function legacyLogSymlink(dir: string, containerId: string, containerName: string, podName: string, podNamespace: string): string {
  let name = `${podName}_${podNamespace}_${containerName}-${containerId}`;
  if (Buffer.byteLength(name) > MAX_FILE_NAME - SUFFIX.length) name = Buffer.from(name).subarray(0, MAX_FILE_NAME - SUFFIX.length).toString();
  return join(dir, name + SUFFIX);
}

/** getContainerIDFromLegacyLogSymlink: the ID after the last `-`, at least 6 characters; undefined when the name is not one of ours. */
export function containerIdOfLegacyLogSymlink(name: string): string | undefined {
  if (!name.endsWith(SUFFIX)) return undefined;
  const dash = name.lastIndexOf('-');
  if (dash < 0) return undefined;
  const id = name.slice(dash + 1, -SUFFIX.length);
  return id.length >= 6 ? id : undefined;
}
