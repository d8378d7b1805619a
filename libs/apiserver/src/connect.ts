import { ApiServer } from './api-server.js';
import { ConfigError } from '@app/config';

/**
 * The apiserver of KUBECONFIG, or null when it is unset. A kubeconfig that
 * cannot be read or has no current cluster is a configuration error: the
 * service exits 1 at boot with the reason (runService prints ConfigError).
 * Reaching the apiserver is not checked here: it may be down at boot, and
 * the reflector and the syncs retry.
 */
export async function connectApiServer(kubeconfig: string | undefined, service: string): Promise<ApiServer | null> {
  if (kubeconfig === undefined || kubeconfig === '') return null;
  try {
    return await ApiServer.fromKubeconfig(kubeconfig, `kubelet-split/${service}`);
  } catch (err) {
    throw new ConfigError([`KUBECONFIG cannot be used: ${(err as Error).message}`]);
  }
}
