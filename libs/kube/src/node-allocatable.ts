/**
 * The node's capacity and allocatable, one rule for the Node's status
 * (status-manager) and for admission (sync-loop): upstream
 * pkg/kubelet/cm/node_container_manager_linux.go GetNodeAllocatableReservation,
 * cm/helpers.go hardEvictionReservation, nodestatus/setters.go MachineInfo,
 * and the hard eviction thresholds of pkg/kubelet/eviction
 * (defaults_linux.go DefaultEvictionHard, api/types.go).
 *
 *   capacity (machine, NODE_CPU/NODE_MEMORY/NODE_MAX_PODS)
 *     − KUBE_RESERVED − SYSTEM_RESERVED
 *     − hard eviction reservation (memory.available → memory, nodefs.available → ephemeral-storage)
 *     − every hugepages-<size> capacity (from memory)
 *     = allocatable (never below zero)
 *
 * Amounts are numbers in the resource's base unit, as upstream's Quantity
 * Value() or MilliValue(): `cpu` in millicores, memory, ephemeral-storage
 * and hugepages in bytes, pods and pid as counts.
 */
import { QuantityError, cpuMillis, memoryBytes, parseQuantity } from './quantity.js';

/** Resource amounts by resource name (`cpu` in millicores; bytes; counts). */
export type ResourceAmounts = Record<string, number>;

/** evictionapi.Signal names this node observes or reserves for. */
export const EvictionSignal = {
  memoryAvailable: 'memory.available',
  nodeFsAvailable: 'nodefs.available',
  nodeFsInodesFree: 'nodefs.inodesFree',
  imageFsAvailable: 'imagefs.available',
  imageFsInodesFree: 'imagefs.inodesFree',
  containerFsAvailable: 'containerfs.available',
  containerFsInodesFree: 'containerfs.inodesFree',
  pidAvailable: 'pid.available',
  allocatableMemoryAvailable: 'allocatableMemory.available',
} as const;
export type EvictionSignal = (typeof EvictionSignal)[keyof typeof EvictionSignal];
const SIGNALS = new Set<string>(Object.values(EvictionSignal));

/** A hard eviction threshold (evictionapi.Threshold with OpLessThan): an amount, or a share of the capacity. */
export interface EvictionThreshold {
  signal: EvictionSignal;
  quantity?: number;
  /** 0..1 */
  percentage?: number;
}

/** The resources a reservation (`--kube-reserved`, `--system-reserved`) may name. */
const RESERVABLE = new Set(['cpu', 'memory', 'ephemeral-storage', 'pid']);

/** A resource amount in its base unit (cpu: millicores). */
export function resourceAmount(resource: string, quantity: string): number {
  return resource === 'cpu' ? cpuMillis(quantity) : parseQuantity(quantity);
}

/**
 * `--kube-reserved` / `--system-reserved`: `cpu=100m,memory=1Gi,ephemeral-storage=1Gi,pid=1000`.
 * Throws an Error naming `setting` on anything else.
 */
export function parseReservation(value: string | undefined, setting: string): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const part of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!RESERVABLE.has(name)) throw new Error(`${setting}: "${part}" is not <resource>=<quantity> with a resource among ${[...RESERVABLE].join(', ')}`);
    try {
      const amount = resourceAmount(name, part.slice(eq + 1).trim());
      if (amount < 0) throw new QuantityError(part.slice(eq + 1).trim(), 'negative');
      out[name] = amount;
    } catch (err) {
      throw new Error(`${setting}: ${name}: ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * `--eviction-hard`: `memory.available<100Mi,nodefs.available<10%,...`
 * (eviction/helpers.go ParseThresholdConfig, hard thresholds only support `<`).
 * Throws an Error naming `setting` on anything else.
 */
export function parseEvictionHard(value: string | undefined, setting: string): EvictionThreshold[] {
  const out: EvictionThreshold[] = [];
  for (const part of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const lt = part.indexOf('<');
    const signal = lt > 0 ? part.slice(0, lt).trim() : '';
    const raw = part.slice(lt + 1).trim();
    if (!SIGNALS.has(signal) || !raw) throw new Error(`${setting}: "${part}" is not <signal><<quantity or percentage> with a signal among ${[...SIGNALS].join(', ')}`);
    if (raw.endsWith('%')) {
      const pct = Number(raw.slice(0, -1));
      if (!Number.isFinite(pct) || pct < 0 || pct > 100) throw new Error(`${setting}: ${signal}: "${raw}" is not a percentage between 0% and 100%`);
      // A 0% threshold means none (ParseThresholdConfig drops it).
      if (pct > 0) out.push({ signal: signal as EvictionSignal, percentage: pct / 100 });
      continue;
    }
    try {
      const q = parseQuantity(raw);
      if (q < 0) throw new QuantityError(raw, 'negative');
      if (q > 0) out.push({ signal: signal as EvictionSignal, quantity: q });
    } catch (err) {
      throw new Error(`${setting}: ${signal}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** evictionapi.GetThresholdQuantity: the threshold's amount against a capacity. */
export function thresholdAmount(t: EvictionThreshold, capacity: number): number {
  return t.quantity ?? Math.trunc(capacity * (t.percentage ?? 0));
}

/** cm/helpers.go hardEvictionReservation: what the hard thresholds keep out of allocatable. */
export function hardEvictionReservation(thresholds: readonly EvictionThreshold[], capacity: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const t of thresholds) {
    if (t.signal === EvictionSignal.memoryAvailable) out['memory'] = thresholdAmount(t, capacity['memory'] ?? 0);
    else if (t.signal === EvictionSignal.nodeFsAvailable) out['ephemeral-storage'] = thresholdAmount(t, capacity['ephemeral-storage'] ?? 0);
  }
  return out;
}

export interface NodeReservations {
  kubeReserved: ResourceAmounts;
  systemReserved: ResourceAmounts;
  evictionHard: readonly EvictionThreshold[];
}

export const isHugePageResourceName = (name: string): boolean => name.startsWith('hugepages-');

/**
 * GetNodeAllocatableReservation applied to the capacity (nodestatus MachineInfo):
 * each resource less its reservations, and memory less every hugepages size's
 * capacity; never below zero.
 */
export function nodeAllocatable(capacity: ResourceAmounts, r: NodeReservations): ResourceAmounts {
  const eviction = hardEvictionReservation(r.evictionHard, capacity);
  const out: ResourceAmounts = {};
  for (const [name, amount] of Object.entries(capacity)) {
    const reserved = (r.kubeReserved[name] ?? 0) + (r.systemReserved[name] ?? 0) + (eviction[name] ?? 0);
    out[name] = Math.max(0, amount - reserved);
  }
  for (const [name, amount] of Object.entries(capacity)) {
    if (isHugePageResourceName(name) && out['memory'] !== undefined) out['memory'] = Math.max(0, out['memory'] - amount);
  }
  return out;
}

const BINARY_SUFFIXES: [string, number][] = [
  ['Ei', 2 ** 60],
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];

/**
 * An amount as the apiserver writes the quantity back (its canonical form):
 * cpu as cores or millicores ("2", "1500m"), bytes in the largest binary
 * suffix that divides them ("16318412Ki", "100Mi", or plain bytes), counts
 * as plain numbers.
 */
export function formatResource(resource: string, amount: number): string {
  if (resource === 'cpu') return amount % 1000 === 0 ? String(amount / 1000) : `${amount}m`;
  if (resource === 'memory' || resource === 'ephemeral-storage' || isHugePageResourceName(resource)) {
    if (amount === 0) return '0';
    for (const [suffix, size] of BINARY_SUFFIXES) if (amount % size === 0) return `${amount / size}${suffix}`;
  }
  return String(amount);
}

/** A ResourceAmounts as a v1.ResourceList (quantity strings). */
export function toResourceList(amounts: ResourceAmounts): Record<string, string> {
  return Object.fromEntries(Object.entries(amounts).map(([k, v]) => [k, formatResource(k, v)]));
}

/** The node's resource settings (@app/config nodeResourcesSchema: NODE_CPU, NODE_MEMORY, NODE_MAX_PODS, KUBE_RESERVED, SYSTEM_RESERVED, EVICTION_HARD). */
export interface NodeResourceSettings {
  cpu: string;
  memory: string;
  maxPods: number;
  kubeReserved?: string;
  systemReserved?: string;
  evictionHard?: string;
}

/** The capacity the settings give: cpu, memory, pods (the machine's extra resources are the caller's to add). */
export function configuredCapacity(s: NodeResourceSettings): ResourceAmounts {
  return { cpu: cpuMillis(s.cpu), memory: memoryBytes(s.memory), pods: s.maxPods };
}

/** The reservations the settings give; throws an Error naming the variable that is wrong. */
export function nodeReservationsFrom(s: NodeResourceSettings): NodeReservations {
  return {
    kubeReserved: parseReservation(s.kubeReserved, 'KUBE_RESERVED'),
    systemReserved: parseReservation(s.systemReserved, 'SYSTEM_RESERVED'),
    evictionHard: parseEvictionHard(s.evictionHard, 'EVICTION_HARD'),
  };
}
