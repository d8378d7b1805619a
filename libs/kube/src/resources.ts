import type { Container, ContainerPort, Pod } from '@app/contracts';
import { isRestartableInitContainer } from './pod-util.js';
import { nanosToMillis, nanosToUnits, parseQuantityNanos } from './quantity.js';

/** What a pod asks of its node, in the units the kubelet admits with. */
export interface PodRequests {
  /** Whole millicores (Quantity.MilliValue). */
  cpuMillis: number;
  /** Whole bytes (Quantity.Value). */
  memoryBytes: number;
}

/** A host port a pod binds on its node. */
export interface HostPort {
  port: number;
  /** "TCP", "UDP" or "SCTP"; the API defaults it to TCP. */
  protocol: string;
  /** "0.0.0.0" (every address) unless the pod names one. */
  hostIP: string;
}

/** CPU and memory in exact nano-units, so sums round once, as the kubelet's do. */
interface Amount {
  cpu: bigint;
  memory: bigint;
}

const ZERO: Amount = { cpu: 0n, memory: 0n };

function add(a: Amount, b: Amount): Amount {
  return { cpu: a.cpu + b.cpu, memory: a.memory + b.memory };
}

function max(a: Amount, b: Amount): Amount {
  return { cpu: a.cpu > b.cpu ? a.cpu : b.cpu, memory: a.memory > b.memory ? a.memory : b.memory };
}

/**
 * One resource's request. The API server defaults a missing request to the
 * limit, resource by resource (SetDefaults_Pod), so a pod read from a file
 * gets the same here.
 */
function request(c: Container, resource: 'cpu' | 'memory'): bigint {
  const value = c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];
  return value === undefined ? 0n : parseQuantityNanos(value);
}

function containerRequests(c: Container): Amount {
  return { cpu: request(c, 'cpu'), memory: request(c, 'memory') };
}

/**
 * The pod's effective requests, as component-helpers' PodRequests (and so the
 * scheduler and the kubelet's admission) compute them. Regular containers run
 * together, so they add up. Init containers run one at a time, but a sidecar
 * (restartable init container) keeps running once started: it adds to the
 * pod's sum, and each later init container runs beside the sidecars declared
 * before it (KEP-753). The result is the larger of the running sum and the
 * peak of the init phase. Throws QuantityError on a malformed quantity.
 */
export function podRequests(pod: Pod): PodRequests {
  let sum = ZERO;
  for (const c of pod.spec.containers) sum = add(sum, containerRequests(c));

  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const c of pod.spec.initContainers ?? []) {
    const own = containerRequests(c);
    let during: Amount;
    if (isRestartableInitContainer(c)) {
      sum = add(sum, own);
      sidecars = add(sidecars, own);
      during = sidecars;
    } else {
      during = add(own, sidecars);
    }
    initPeak = max(initPeak, during);
  }
  const total = max(sum, initPeak);
  return { cpuMillis: nanosToMillis(total.cpu), memoryBytes: nanosToUnits(total.memory) };
}

/**
 * The host ports a pod binds, as the scheduler's GetHostPorts lists them:
 * sidecars (restartable init containers) first, then the app containers;
 * ordinary init containers are not counted, since they have exited by the
 * time the app runs. On a hostNetwork pod the API defaults hostPort to
 * containerPort, so an unset hostPort counts as the containerPort.
 */
export function hostPorts(pod: Pod): HostPort[] {
  const hostNetwork = pod.spec.hostNetwork === true;
  const running = [...(pod.spec.initContainers ?? []).filter(isRestartableInitContainer), ...pod.spec.containers];
  const ports: HostPort[] = [];
  for (const c of running) {
    for (const p of c.ports ?? []) {
      const port = hostPortOf(p, hostNetwork);
      if (port <= 0) continue;
      ports.push({ port, protocol: p.protocol ?? 'TCP', hostIP: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP });
    }
  }
  return ports;
}

function hostPortOf(p: ContainerPort, hostNetwork: boolean): number {
  const hostPort = p.hostPort ?? 0;
  return hostPort === 0 && hostNetwork ? p.containerPort : hostPort;
}
