/**
 * The pods' DNS (pkg/kubelet/network/dns/dns.go), pure: the node's
 * resolv.conf, the kubelet's clusterDNS and clusterDomain come in as
 * arguments, and the warnings upstream records go out as data for the caller
 * to record (the runtime manager, the pod worker's start).
 *
 *   upstream                             here
 *   Configurer.GetPodDNS                 getPodDNS
 *   getPodDNSType                        podDNSType
 *   generateSearchesForDNSClusterFirst   searchesForClusterFirst
 *   appendDNSConfig, mergeDNSOptions     appendDNSConfig, mergeDNSOptions
 *   formDNSConfigFitsLimits              (in getPodDNS)
 *   formDNSNameserversFitsLimits         nameserversFitLimits
 *   formDNSSearchFitsLimits              searchesFitLimits
 *   CheckLimitsForResolvConf             checkLimitsForResolvConf
 *   parseResolvConf, appendOptions       parseResolvConf (adapters/host-dns.ts reads the file)
 *
 * Not here: --resolv-conf="" (upstream's 127.0.0.1 and search "." for Default
 * pods): the node's resolv.conf is always /etc/resolv.conf, read once at start.
 * Go's map order in mergeDNSOptions and appendOptions is random; here an
 * option keeps the place its name first had.
 */
import type { Pod } from '@app/contracts';
import { formatPod } from '@app/probe';

/** The pod's spec.dnsConfig. */
type PodDNSConfig = NonNullable<Pod['spec']['dnsConfig']>;

/** The CRI's DNSConfig: what a sandbox's resolv.conf is made of. */
export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** What the Configurer is made from (NewConfigurer): the node's resolv.conf, --cluster-dns, --cluster-domain. */
export interface DNSFacts {
  /** The node's resolv.conf (getHostDNSConfig). */
  hostDns: DNSConfig;
  /** clusterDNS; none or empty: ClusterFirst pods fall back to Default. */
  clusterDns?: readonly string[] | undefined;
  /** clusterDomain; none: no cluster search paths. */
  clusterDomain?: string | undefined;
}

/** A warning upstream records with c.recorder: on the pod or on the node. */
export interface DNSEvent {
  on: 'pod' | 'node';
  reason: 'MissingClusterDNS' | 'DNSConfigForming';
  message: string;
}

export type PodDNSType = 'cluster' | 'host' | 'none';

/** validation.MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars; utilvalidation.DNS1123SubdomainMaxLength. */
export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** defaultDNSOptions: a ClusterFirst pod's, instead of the node's. */
const DEFAULT_DNS_OPTIONS: readonly string[] = ['ndots:5'];

function omitDuplicates(items: readonly string[]): string[] {
  return [...new Set(items)];
}

/**
 * getPodDNSType: ClusterFirst on the host network is Default;
 * ClusterFirstWithHostNet is the cluster's either way. An unset policy is
 * the API's default, ClusterFirst; an unknown one (validation refuses it)
 * is the cluster's, as upstream falls back.
 */
export function podDNSType(pod: Pod): PodDNSType {
  switch (pod.spec.dnsPolicy ?? 'ClusterFirst') {
    case 'None':
      return 'none';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
      return pod.spec.hostNetwork === true ? 'host' : 'cluster';
    default:
      return 'cluster';
  }
}

/** generateSearchesForDNSClusterFirst: `<ns>.svc.<domain>`, `svc.<domain>`, `<domain>`, then the node's; none without a cluster domain. */
export function searchesForClusterFirst(hostSearches: readonly string[], pod: Pod, clusterDomain: string | undefined): string[] {
  if (!clusterDomain) return [...hostSearches];
  const ns = pod.metadata.namespace ?? '';
  return omitDuplicates([`${ns}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...hostSearches]);
}

/** An option's name: what comes before its first `:`. */
function optionName(option: string): string {
  const i = option.indexOf(':');
  return i === -1 ? option : option.slice(0, i);
}

/**
 * mergeDNSOptions: the pod's dnsConfig options over the existing ones; an
 * option named again takes the later value (`ndots:5` and `{ndots, 3}`:
 * `ndots:3`), and one without a value is its name alone.
 */
export function mergeDNSOptions(existing: readonly string[], podOptions: PodDNSConfig['options']): string[] {
  const merged = new Map<string, string>();
  for (const op of existing) {
    const name = optionName(op);
    merged.set(name, op.slice(name.length + 1));
  }
  for (const op of podOptions ?? []) merged.set(op.name ?? '', op.value ?? '');
  return [...merged].map(([name, value]) => (value !== '' ? `${name}:${value}` : name));
}

/** appendDNSConfig: the pod's nameservers and searches after the existing ones (duplicates once), its options merged. */
export function appendDNSConfig(existing: DNSConfig, podConfig: PodDNSConfig): DNSConfig {
  return {
    servers: omitDuplicates([...existing.servers, ...(podConfig.nameservers ?? [])]),
    searches: omitDuplicates([...existing.searches, ...(podConfig.searches ?? [])]),
    options: mergeDNSOptions(existing.options, podConfig.options),
  };
}

/** formDNSNameserversFitsLimits: the first three, and a DNSConfigForming warning when there were more. */
export function nameserversFitLimits(servers: readonly string[]): { servers: string[]; event?: DNSEvent } {
  if (servers.length <= MAX_DNS_NAMESERVERS) return { servers: [...servers] };
  const applied = servers.slice(0, MAX_DNS_NAMESERVERS);
  return { servers: applied, event: { on: 'pod', reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${applied.join(' ')}` } };
}

/**
 * formDNSSearchFitsLimits: the first 32 search paths, without any longer
 * than 253 characters (glibc 2.28 aborts on one over 255), then cut from the
 * end until the line is at most 2048 characters; a DNSConfigForming warning
 * when anything was left out.
 */
export function searchesFitLimits(searches: readonly string[]): { searches: string[]; event?: DNSEvent } {
  let exceeded = searches.length > MAX_DNS_SEARCH_PATHS;
  const first = searches.slice(0, MAX_DNS_SEARCH_PATHS);
  const fit = first.filter((s) => s.length <= DNS1123_SUBDOMAIN_MAX_LENGTH);
  if (fit.length < first.length) exceeded = true;
  let lineLength = fit.join(' ').length;
  if (lineLength > MAX_DNS_SEARCH_LIST_CHARS) {
    exceeded = true;
    while (fit.length > 0 && lineLength > MAX_DNS_SEARCH_LIST_CHARS) lineLength -= (fit.pop() ?? '').length + 1;
  }
  if (!exceeded) return { searches: fit };
  return { searches: fit, event: { on: 'pod', reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${fit.join(' ')}` } };
}

/**
 * GetPodDNS: the sandbox's DNS config and the warnings to record.
 *   None:     empty, then the pod's dnsConfig.
 *   cluster:  clusterDNS as the only nameservers (the cluster DNS forwards
 *             what it cannot answer), the cluster search paths before the
 *             node's, ndots:5 instead of the node's options; without a
 *             clusterDNS, MissingClusterDNS on the node and the pod, and Default.
 *   Default:  the node's resolv.conf.
 * Then the pod's dnsConfig appended (appendDNSConfig), then the limits.
 */
export function getPodDNS(pod: Pod, facts: DNSFacts): { config: DNSConfig; events: DNSEvent[] } {
  const events: DNSEvent[] = [];
  const host = facts.hostDns;
  let config: DNSConfig = { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  const type = podDNSType(pod);
  if (type === 'none') config = { servers: [], searches: [], options: [] };
  else if (type === 'cluster') {
    if (facts.clusterDns && facts.clusterDns.length > 0) {
      config = { servers: [...facts.clusterDns], searches: searchesForClusterFirst(host.searches, pod, facts.clusterDomain), options: [...DEFAULT_DNS_OPTIONS] };
    } else {
      const nodeMessage = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
      events.push({ on: 'node', reason: 'MissingClusterDNS', message: nodeMessage }, { on: 'pod', reason: 'MissingClusterDNS', message: `pod: "${formatPod(pod)}". ${nodeMessage}` });
    }
  }
  if (pod.spec.dnsConfig) config = appendDNSConfig(config, pod.spec.dnsConfig);
  const servers = nameserversFitLimits(config.servers);
  const searches = searchesFitLimits(config.searches);
  for (const e of [servers.event, searches.event]) if (e) events.push(e);
  return { config: { servers: servers.servers, searches: searches.searches, options: config.options }, events };
}

/**
 * CheckLimitsForResolvConf: the node's search line must leave room for the
 * three cluster search paths (with a cluster domain), have no path longer
 * than 253 characters and be at most 2048 characters long. The warning to
 * record on the node, or none.
 */
export function checkLimitsForResolvConf(resolverConfig: string, hostSearches: readonly string[], clusterDomain: string | undefined): string | undefined {
  const domainCountLimit = MAX_DNS_SEARCH_PATHS - (clusterDomain ? 3 : 0);
  if (hostSearches.length > domainCountLimit) return `Resolv.conf file '${resolverConfig}' contains search line consisting of more than ${domainCountLimit} domains!`;
  if (hostSearches.some((s) => s.length > DNS1123_SUBDOMAIN_MAX_LENGTH)) return `Resolv.conf file "${resolverConfig}" contains a search path which length is more than allowed ${DNS1123_SUBDOMAIN_MAX_LENGTH} chars!`;
  if (hostSearches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) return `Resolv.conf file '${resolverConfig}' contains search line which length is more than allowed ${MAX_DNS_SEARCH_LIST_CHARS} chars!`;
  return undefined;
}

/**
 * parseResolvConf: nameserver lines accumulate (the first address of each),
 * the last search line wins (a trailing dot dropped, a lone "." left out),
 * options accumulate with a later one of the same name replacing the earlier
 * (appendOptions); `#` starts a comment line. A nameserver line without an
 * address is an error, returned beside what was read.
 */
export function parseResolvConf(text: string): DNSConfig & { errors: string[] } {
  const servers: string[] = [];
  let searches: string[] = [];
  const options = new Map<string, string>();
  const errors: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter(Boolean);
    const [key, ...rest] = fields;
    if (key === 'nameserver') {
      if (rest[0] !== undefined) servers.push(rest[0]);
      else errors.push('nameserver list is empty');
    } else if (key === 'search') searches = rest.filter((s) => s !== '.').map((s) => s.replace(/\.$/, ''));
    else if (key === 'options') for (const op of rest) options.set(op.split(':')[0] ?? op, op);
  }
  return { servers, searches, options: [...options.values()], errors };
}
