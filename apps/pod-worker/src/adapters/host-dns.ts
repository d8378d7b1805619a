import { existsSync, readFileSync, readdirSync } from 'node:fs';
import type { NodeFacts } from '../kuberuntime/runtime-config.js';

/** The host's resolv.conf (nameserver, search, options), for pods on the node's DNS; empty when it cannot be read. */
export function readHostDns(path = '/etc/resolv.conf'): NodeFacts['hostDns'] {
  try {
    const lines = readFileSync(path, 'utf8').split('\n');
    const words = (k: string) => lines.filter((l) => l.startsWith(`${k} `)).flatMap((l) => l.split(/\s+/).slice(1)).filter(Boolean);
    return { servers: words('nameserver'), searches: words('search'), options: words('options') };
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
