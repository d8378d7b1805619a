/**
 * The service environment variables a container is started with
 * (pkg/kubelet/envvars/envvars.go FromServices, kubelet_pods.go
 * getServiceEnvVarMap), pure: the services come in as an argument.
 *
 *   FOO_SERVICE_HOST=10.0.0.11            the cluster IP
 *   FOO_SERVICE_PORT=8765                 the first port
 *   FOO_SERVICE_PORT_<NAME>=8765          each named port
 *   FOO_PORT=tcp://10.0.0.11:8765         Docker links: the first port
 *   FOO_PORT_8765_TCP=tcp://10.0.0.11:8765, _PROTO=tcp, _PORT=8765, _ADDR=10.0.0.11
 *
 * Which services: those of the pod's namespace when enableServiceLinks
 * (default true), and always the master services of `default`
 * (`kubernetes`); never one without a cluster IP (headless, or None).
 */
import type { Service } from '@app/contracts';

/** kubelet_pods.go masterServices */
const MASTER_SERVICES: ReadonlySet<string> = new Set(['kubernetes']);
const NAMESPACE_DEFAULT = 'default';

/** v1helper.IsServiceIPSet: a cluster IP that is neither empty nor None. */
export function isServiceIPSet(service: Service): boolean {
  const ip = service.spec?.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

/** makeEnvVariableName */
function envName(s: string): string {
  return s.replaceAll('-', '_').toUpperCase();
}

/** net.JoinHostPort */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** FromServices: the variables of each service, in the order given. */
export function fromServices(services: readonly Service[]): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const service of services) {
    if (!isServiceIPSet(service)) continue;
    const ip = service.spec?.clusterIP ?? '';
    const ports = service.spec?.ports ?? [];
    const prefix = envName(service.metadata?.name ?? '');
    out.push({ name: `${prefix}_SERVICE_HOST`, value: ip });
    const portName = `${prefix}_SERVICE_PORT`;
    out.push({ name: portName, value: String(ports[0]?.port ?? 0) });
    for (const sp of ports) if (sp.name) out.push({ name: `${portName}_${envName(sp.name)}`, value: String(sp.port) });
    // Docker-compatible link variables.
    ports.forEach((sp, i) => {
      const protocol = sp.protocol || 'TCP';
      const url = `${protocol.toLowerCase()}://${joinHostPort(ip, sp.port)}`;
      if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
      const portPrefix = `${prefix}_PORT_${sp.port}_${protocol.toUpperCase()}`;
      out.push({ name: portPrefix, value: url }, { name: `${portPrefix}_PROTO`, value: protocol.toLowerCase() }, { name: `${portPrefix}_PORT`, value: String(sp.port) }, { name: `${portPrefix}_ADDR`, value: ip });
    });
  }
  return out;
}

/**
 * getServiceEnvVarMap: the variables of the master services of `default` and,
 * with enableServiceLinks, of every service of `namespace` (which wins over
 * a master service of the same name). Services by name, so the order is
 * stable (upstream's is a Go map's).
 */
export function getServiceEnvVarMap(services: readonly Service[], namespace: string, enableServiceLinks: boolean): Map<string, string> {
  const byName = new Map<string, Service>();
  for (const service of services) {
    if (!isServiceIPSet(service)) continue;
    const name = service.metadata?.name ?? '';
    if (service.metadata?.namespace === NAMESPACE_DEFAULT && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, service);
    } else if (service.metadata?.namespace === namespace && enableServiceLinks) {
      byName.set(name, service);
    }
  }
  const mapped = [...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  return new Map(fromServices(mapped).map((e) => [e.name, e.value]));
}
