/**
 * A pod's quality-of-service class, as pkg/apis/core/v1/helper/qos/qos.go
 * GetPodQOS computes it: the status' qosClass, and what the kubelet's cgroup
 * and eviction code would read. Guaranteed when every container has equal
 * CPU and memory requests and limits, BestEffort when none has any,
 * Burstable otherwise.
 */
import type { Pod } from '@app/contracts';
import { parseQuantityNanos } from './quantity.js';

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

function positiveQuantity(value: string | undefined): bigint {
  if (value === undefined) return 0n;
  try {
    const n = parseQuantityNanos(value);
    return n > 0n ? n : 0n;
  } catch {
    // Validation refuses such a pod before it gets here; count it as unset.
    return 0n;
  }
}

/**
 * GetPodQOS. A missing request stands for the limit, resource by resource,
 * as the API server's defaulting makes it (applyPodDefaults does the same
 * for file pods): the same answer for a defaulted pod, and the right one for
 * a pod that skipped defaulting.
 */
export function getPodQOS(pod: Pod): PodQOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let isGuaranteed = true;
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    const found = new Set<string>();
    for (const r of QOS_RESOURCES) {
      const limit = positiveQuantity(c.resources?.limits?.[r]);
      const request = positiveQuantity(c.resources?.requests?.[r] ?? c.resources?.limits?.[r]);
      if (request > 0n) requests.set(r, (requests.get(r) ?? 0n) + request);
      if (limit > 0n) {
        found.add(r);
        limits.set(r, (limits.get(r) ?? 0n) + limit);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (isGuaranteed) {
    for (const [r, req] of requests) {
      if (limits.get(r) !== req) {
        isGuaranteed = false;
        break;
      }
    }
  }
  return isGuaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
