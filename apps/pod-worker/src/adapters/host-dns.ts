import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { parseResolvConf, type DNSConfig } from '../network/dns.js';

/** The node's resolv.conf (the kubelet's default --resolv-conf). */
export const HOST_RESOLV_CONF = '/etc/resolv.conf';

/** The host's resolv.conf as the kubelet parses it (parseResolvConf), for pods on the node's DNS; empty when it cannot be read. */
export function readHostDns(path = HOST_RESOLV_CONF): DNSConfig {
  try {
    const { servers, searches, options } = parseResolvConf(readFileSync(path, 'utf8'));
    return { servers, searches, options };
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

/**
 * The host's /sys/devices/system/cpu/cpu<N>/thermal_throttle directories
 * that exist, which upstream masks in every unprivileged container beside
 * moby's defaults (securitycontext defaultMaskedPaths).
 */
export function thermalThrottlePaths(root = '/sys/devices/system/cpu'): string[] {
  try {
    return readdirSync(root)
      .filter((d) => /^cpu\d+$/.test(d))
      .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
      .map((d) => `${root}/${d}/thermal_throttle`)
      .filter((p) => existsSync(p));
  } catch {
    return [];
  }
}
