import { env } from '@app/config';
import type { FullConfig } from '@app/service';

/** config-source's own environment variables, on top of the shared ones (@app/config sharedSchema). */
export const configSourceConfigSchema = {
  POD_MANIFEST_PATH: env.optionalString({ describe: 'directory of static pod manifests, like --pod-manifest-path' }),
  FILE_CHECK_FREQUENCY: env.duration({ default: 20_000, describe: 'how often the manifest directory is fully re-read, like --file-check-frequency' }),
  MANIFEST_URL: env.optionalUrl(['http', 'https'], { describe: 'URL of static pod manifests, like --manifest-url' }),
  MANIFEST_URL_HEADER: env.optionalString({ describe: 'HTTP headers for MANIFEST_URL, "Name:value" pairs separated by ",", like --manifest-url-header' }),
  HTTP_CHECK_FREQUENCY: env.duration({ default: 20_000, describe: 'how often MANIFEST_URL is polled, like --http-check-frequency' }),
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster' }),
};

export type ConfigSourceConfig = FullConfig<typeof configSourceConfigSchema>;
