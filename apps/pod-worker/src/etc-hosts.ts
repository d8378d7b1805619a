/**
 * The kubelet-managed /etc/hosts (pkg/kubelet/kubelet_pods.go
 * shouldMountHostsFile, makeHostsMount, ensureHostsFile,
 * managedHostsFileContent, nodeHostsFileContent,
 * hostsEntriesFromHostAliases; GeneratePodHostNameAndDomain), pure: the
 * file's content and where it goes. The pod worker writes it to
 * `<pod dir>/etc-hosts` before each container starts and bind-mounts it at
 * /etc/hosts, unless the container mounts a volume there itself.
 */
import { join } from 'node:path';
import type { Container, Pod } from '@app/contracts';

/** Where the kubelet mounts its hosts file in a container (etcHostsPath). */
export const ETC_HOSTS_PATH = '/etc/hosts';

const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';
const HOSTNAME_MAX_LEN = 63;

/** getEtcHostsPath: `<pod dir>/etc-hosts`. */
export function etcHostsPath(pod: Pod, podRoot: string): string {
  return join(podRoot, pod.metadata.uid ?? '', 'etc-hosts');
}

/** shouldMountHostsFile: once the pod has an IP, or on the host's network. */
export function shouldMountHostsFile(pod: Pod, podIPs: readonly string[]): boolean {
  return podIPs.length > 0 || pod.spec.hostNetwork === true;
}

/** makeMounts: not when the container mounts something at /etc/hosts itself. */
export function containerMountsEtcHosts(c: Container): boolean {
  return (c.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH);
}

/** truncatePodHostnameIfNeeded: 63 characters at most, not ending in '-' or '.'. */
function truncateHostname(hostname: string): string {
  if (hostname.length <= HOSTNAME_MAX_LEN) return hostname;
  return hostname.slice(0, HOSTNAME_MAX_LEN).replace(/[-.]+$/, '');
}

/**
 * GeneratePodHostNameAndDomain: spec.hostname or the pod's name (truncated),
 * and with spec.subdomain `<subdomain>.<namespace>.svc.<cluster domain>`.
 */
export function podHostnameAndDomain(pod: Pod, clusterDomain = ''): { hostname: string; domain: string } {
  const hostname = truncateHostname(pod.spec.hostname || pod.metadata.name || '');
  const domain = pod.spec.subdomain ? `${pod.spec.subdomain}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** hostsEntriesFromHostAliases: a blank line, a comment, then one line per IP with its names tab-separated. */
function hostAliasEntries(pod: Pod): string {
  const aliases = pod.spec.hostAliases ?? [];
  if (aliases.length === 0) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/** managedHostsFileContent: localhost, the IPv6 names, each pod IP with the pod's hostname, then the host aliases. */
export function managedHostsFileContent(pod: Pod, podIPs: readonly string[], clusterDomain = ''): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  const lines = [
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    ...podIPs.map((ip) => (domain ? `${ip}\t${hostname}.${domain}\t${hostname}` : `${ip}\t${hostname}`)),
  ];
  return `${MANAGED_HOSTS_HEADER}${lines.map((l) => `${l}\n`).join('')}${hostAliasEntries(pod)}`;
}

/** nodeHostsFileContent: the node's own hosts file under its header, then the host aliases. */
export function nodeHostsFileContent(pod: Pod, nodeHosts: string): string {
  return `${MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK}${nodeHosts}${hostAliasEntries(pod)}`;
}

