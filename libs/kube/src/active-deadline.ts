/**
 * The kubelet's activeDeadlineHandler.pastActiveDeadline: a pod that has
 * been active (since its status' startTime) for activeDeadlineSeconds or
 * more. Callers decide which status the start time comes from.
 */
import type { Pod } from '@app/contracts';

export function pastActiveDeadline(pod: Pod, startTime: string | undefined, now: number): boolean {
  const deadline = pod.spec.activeDeadlineSeconds;
  if (deadline === undefined || !startTime) return false;
  return now - Date.parse(startTime) >= deadline * 1000;
}
