/**
 * A real control plane for tests: etcd 3.6.4 and kube-apiserver v1.34.4 (built
 * from the Go module proxy by deploy/control-plane/build.sh) on loopback, in
 * a temporary directory, with certificates made by `openssl`. No scheduler and
 * no controller-manager: tests bind pods themselves (`spec.nodeName`) and
 * create the namespace's `default` ServiceAccount (createNamespace does).
 *
 * Who may do what is a real cluster's: `--authorization-mode=Node,RBAC` and
 * the NodeRestriction admission plugin. Users come from a static token file:
 * `admin` (group system:masters) and, for each node asked for,
 * `system:node:<node>` (group system:nodes), as a kubelet's credentials would
 * be. kubeconfig(user) writes the file a service reads from `KUBECONFIG`.
 *
 *   const cp = await startControlPlane({ nodes: ['node-a'] });
 *   await cp.createNamespace('t1');
 *   stack env: { KUBECONFIG: cp.kubeconfig('node-a') }
 *   await cp.restart();  // the apiserver only: same port, certificates and etcd
 *   await cp.stop();     // both processes, and the directory
 *
 * Logs: etcd.log and kube-apiserver.log in the directory (copied to
 * KS_E2E_LOGS by stop(), when set); a start that fails throws with their
 * last lines. The binaries: `KS_CONTROL_PLANE_BIN` (a
 * directory, test/run.mjs sets it), else build.sh is run (minutes, once).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { ApiServer, isAlreadyExists } from '@app/apiserver';
import type { Namespace, ServiceAccount } from 'kubernetes-types/core/v1.js';
import { REPO_ROOT, exited, freePort } from '../../deploy/local/stack.js';

export const KUBERNETES_VERSION = 'v1.34.4';
export const ETCD_VERSION = '3.6.4';

export interface ControlPlaneOptions {
  /** Node names that get credentials (user `system:node:<node>`, group `system:nodes`). */
  nodes?: string[];
  /** More kube-apiserver flags (`--v=4`, `--feature-gates=...`). */
  apiserverArgs?: string[];
  /** How long the apiserver may take to answer /readyz (default 60 s, each start). */
  readyTimeoutMs?: number;
  /** Plain users with a token and no group (no RBAC at all): `token(user)`. */
  users?: string[];
  /**
   * The apiserver reaches kubelets as a real cluster's does: with a client
   * certificate (`--kubelet-client-certificate`, CN kube-apiserver-kubelet-client,
   * O system:masters) signed by `caFile`, the CA a kubelet takes as its client
   * CA, at the Node's InternalIP (`--kubelet-preferred-address-types=InternalIP`).
   */
  kubeletClient?: boolean;
  /**
   * The address the apiserver binds and advertises (the `kubernetes` Service's endpoint), in its
   * serving certificate: an address on a bridge of the run's, so that pods reach it through the
   * Service (kube-proxy). Default 127.0.0.1.
   */
  address?: string;
}

export interface ControlPlane {
  /** `https://<address>:<port>` (127.0.0.1 unless `address`) */
  readonly url: string;
  /** The temporary directory: certificates, tokens, kubeconfigs, etcd's data, the logs. */
  readonly dir: string;
  /** The CA that signed the apiserver's serving certificate (PEM file), and its client certificate to kubelets (`kubeletClient`). */
  readonly caFile: string;
  /** A client with the admin's token (system:masters). */
  readonly admin: ApiServer;
  /** The bearer token of `admin` or of a node asked for at start. */
  token(user: string): string;
  /** Writes (once) and returns a kubeconfig (mode 0600) for `admin` or a node asked for at start. */
  kubeconfig(user: string): string;
  /** A client with a node's (or the admin's) credentials. */
  client(user: string, userAgent?: string): Promise<ApiServer>;
  /** Creates a namespace (an existing one is fine) and its `default` ServiceAccount. */
  createNamespace(name: string): Promise<void>;
  /** Creates the namespace's `default` ServiceAccount when missing (the controller-manager would). */
  ensureDefaultServiceAccount(namespace: string): Promise<void>;
  /** The running processes. */
  readonly etcdPid: number;
  readonly apiserverPid: number;
  /** ms from spawning the apiserver to its /readyz 200 (the last start). */
  readonly readyAfterMs: number;
  /**
   * "The apiserver restarted": stops kube-apiserver (SIGTERM, or SIGKILL with
   * `kill`), stays down `downMs`, and starts it again on the same port with
   * the same certificates, tokens and etcd; resolves once /readyz answers.
   */
  restart(opts?: { kill?: boolean; downMs?: number }): Promise<void>;
  /** Stops the apiserver, then etcd, and removes the directory. */
  stop(): Promise<void>;
}

/** The directory holding etcd and kube-apiserver: KS_CONTROL_PLANE_BIN, else what build.sh builds (or finds cached). */
export async function controlPlaneBinaries(): Promise<string> {
  const fromEnv = process.env['KS_CONTROL_PLANE_BIN'];
  const dir =
    fromEnv ||
    (await new Promise<string>((resolve, reject) => {
      const child = execFile('bash', [join(REPO_ROOT, 'deploy', 'control-plane', 'build.sh')], { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout) =>
        err ? reject(new Error(`deploy/control-plane/build.sh failed: ${err.message}`)) : resolve(stdout.trim().split('\n').pop() ?? ''),
      );
      child.stderr?.pipe(process.stderr);
    }));
  for (const bin of ['etcd', 'kube-apiserver']) {
    if (!existsSync(join(dir, bin))) throw new Error(`no ${bin} in ${dir} (KS_CONTROL_PLANE_BIN, or deploy/control-plane/build.sh)`);
  }
  return dir;
}

/** Processes started here and still running: killed if the test process exits without stop(). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = await controlPlaneBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'ks-cp-'));
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const nodes = opts.nodes ?? [];
  let etcd: ChildProcess | undefined;
  let apiserver: ChildProcess | undefined;
  try {
    const address = opts.address ?? '127.0.0.1';
    const pki = makePki(join(dir, 'pki'), address);
    const users = opts.users ?? [];
    const tokens = new Map<string, string>([
      ['admin', randomBytes(24).toString('hex')],
      ...nodes.map((n) => [n, randomBytes(24).toString('hex')] as [string, string]),
      ...users.map((u) => [u, randomBytes(24).toString('hex')] as [string, string]),
    ]);
    // token,user,uid,"group1,group2" (the static token file's CSV)
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(
      tokenFile,
      [...tokens]
        .map(([user, token]) =>
          user === 'admin' ? `${token},admin,admin,"system:masters"` : users.includes(user) ? `${token},${user},${user},""` : `${token},system:node:${user},system:node:${user},"system:nodes"`,
        )
        .join('\n') + '\n',
      { mode: 0o600 },
    );

    const [etcdPort, peerPort, port] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcdLog = join(dir, 'etcd.log');
    etcd = spawnLogged(join(bin, 'etcd'), [
      '--name=ks-test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=ks-test=http://127.0.0.1:${peerPort}`,
      '--initial-cluster-state=new',
      // A test's cluster: losing it on a power cut is fine; fsync on a shared disk is slow.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ], etcdLog);
    await waitReady('etcd', () => httpOk(`${etcdUrl}/health`), etcd, etcdLog, 30_000);

    const url = `https://${address}:${port}`;
    const apiserverLog = join(dir, 'kube-apiserver.log');
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${address}`,
      `--advertise-address=${address}`,
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, 'apiserver')}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--token-auth-file=${tokenFile}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--allow-privileged=true',
      // The aggregation layer (an APIService served by a pod): the front proxy's client certificate, as kubeadm sets it.
      `--requestheader-client-ca-file=${pki.frontProxyCa}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
      `--proxy-client-key-file=${pki.frontProxyClientKey}`,
      '--profiling=false',
      '--v=1',
      ...(opts.kubeletClient
        ? [`--kubelet-client-certificate=${pki.kubeletClientCert}`, `--kubelet-client-key=${pki.kubeletClientKey}`, '--kubelet-preferred-address-types=InternalIP']
        : []),
      ...(opts.apiserverArgs ?? []),
    ];
    const ca = readFileSync(pki.caCert);
    let readyAfterMs = 0;
    const startApiserver = async () => {
      const t0 = performance.now();
      const child = spawnLogged(join(bin, 'kube-apiserver'), apiserverArgs, apiserverLog);
      apiserver = child;
      await waitReady('kube-apiserver', () => httpsOk(`${url}/readyz`, ca), child, apiserverLog, readyTimeoutMs);
      readyAfterMs = performance.now() - t0;
    };
    await startApiserver();

    const kubeconfigs = new Map<string, string>();
    const token = (user: string) => {
      const t = tokens.get(user);
      if (!t) throw new Error(`no credentials for ${user}: startControlPlane({ nodes: [...] }) names the nodes (has: ${[...tokens.keys()].join(', ')})`);
      return t;
    };
    const kubeconfig = (user: string) => {
      const have = kubeconfigs.get(user);
      if (have) return have;
      const name = user === 'admin' || users.includes(user) ? user : `system:node:${user}`;
      const file = join(dir, `kubeconfig-${user}.yaml`);
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'ks-test', cluster: { server: url, 'certificate-authority': pki.caCert } }],
          users: [{ name, user: { token: token(user) } }],
          contexts: [{ name: 'ks-test', context: { cluster: 'ks-test', user: name } }],
          'current-context': 'ks-test',
        }),
        { mode: 0o600 },
      );
      kubeconfigs.set(user, file);
      return file;
    };
    const client = (user: string, userAgent = 'kubelet-split/e2e-test') => ApiServer.fromKubeconfig(kubeconfig(user), userAgent);
    const admin = await client('admin');
    const ensureDefaultServiceAccount = async (namespace: string) => {
      const sa: ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } };
      await admin.request(`/api/v1/namespaces/${namespace}/serviceaccounts`, { method: 'POST', body: sa }).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    };
    // The apiserver's own controllers make these just after /readyz; tests (and a node's Lease) need them.
    await waitFor('the default and kube-node-lease namespaces', async () => {
      for (const ns of ['default', 'kube-node-lease']) await admin.request<Namespace>(`/api/v1/namespaces/${ns}`);
      return true;
    }, 30_000);
    await ensureDefaultServiceAccount('default');

    const stopApiserver = async (kill: boolean) => {
      const child = apiserver;
      if (!child) return;
      await stopChild(child, kill ? 0 : 10_000);
    };
    let stopped = false;
    return {
      url,
      dir,
      caFile: pki.caCert,
      admin,
      token,
      kubeconfig,
      client,
      ensureDefaultServiceAccount,
      async createNamespace(name: string) {
        const ns: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
        await admin.request('/api/v1/namespaces', { method: 'POST', body: ns }).catch((err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
        });
        await ensureDefaultServiceAccount(name);
      },
      get etcdPid() {
        return etcd?.pid ?? 0;
      },
      get apiserverPid() {
        return apiserver?.pid ?? 0;
      },
      get readyAfterMs() {
        return readyAfterMs;
      },
      async restart(r = {}) {
        await stopApiserver(r.kill === true);
        await new Promise((res) => setTimeout(res, r.downMs ?? 0));
        await startApiserver();
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopApiserver(false);
        if (etcd) await stopChild(etcd, 5000);
        // KS_E2E_LOGS=<dir> keeps the logs, as it keeps the services' (node-stack.ts).
        const keep = process.env['KS_E2E_LOGS'];
        if (keep) for (const log of [etcdLog, apiserverLog]) if (existsSync(log)) copyFileSync(log, join(keep, `control-plane-${port}-${basename(log)}`));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (apiserver) await stopChild(apiserver, 0);
    if (etcd) await stopChild(etcd, 0);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

interface Pki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  kubeletClientCert: string;
  kubeletClientKey: string;
  frontProxyCa: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

/**
 * A CA, the apiserver's serving certificate signed by it (IP SAN 127.0.0.1,
 * DNS localhost and the in-cluster names), and the service-account signing
 * key pair; P-256 keys, valid two days.
 */
function makePki(dir: string, address: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (name: string) => join(dir, name);
  writeFileSync(
    f('openssl.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      '[dn]',
      '[ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign,digitalSignature',
      'subjectKeyIdentifier = hash',
      '[server]',
      'basicConstraints = critical,CA:FALSE',
      'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = serverAuth',
      'authorityKeyIdentifier = keyid',
      `subjectAltName = IP:127.0.0.1,${address === '127.0.0.1' ? '' : `IP:${address},`}IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local`,
      '[client]',
      'basicConstraints = critical,CA:FALSE',
      'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = clientAuth',
      'authorityKeyIdentifier = keyid',
      '',
    ].join('\n'),
  );
  const openssl = (...args: string[]) => {
    try {
      execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as { stderr?: Buffer; message: string };
      throw new Error(`openssl ${args[0] ?? ''} failed: ${e.stderr?.toString() ?? e.message}`);
    }
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=kubelet-split-test-ca', '-config', f('openssl.cnf'), '-extensions', 'ca');
  openssl('req', '-new', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=kube-apiserver', '-config', f('openssl.cnf'));
  openssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.crt'), '-days', '2', '-extfile', f('openssl.cnf'), '-extensions', 'server');
  // The apiserver's client certificate to kubelets (kubeadm's apiserver-kubelet-client).
  openssl('req', '-new', ...ec, '-keyout', f('kubelet-client.key'), '-out', f('kubelet-client.csr'), '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client', '-config', f('openssl.cnf'));
  openssl('x509', '-req', '-in', f('kubelet-client.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('kubelet-client.crt'), '-days', '2', '-extfile', f('openssl.cnf'), '-extensions', 'client');
  // The aggregation layer's front proxy (kubeadm's front-proxy-ca and front-proxy-client): the apiserver's
  // client certificate to extension apiservers, which they trust through the requestheader client CA.
  openssl('req', '-x509', ...ec, '-keyout', f('front-proxy-ca.key'), '-out', f('front-proxy-ca.crt'), '-days', '2', '-subj', '/CN=front-proxy-ca', '-config', f('openssl.cnf'), '-extensions', 'ca');
  openssl('req', '-new', ...ec, '-keyout', f('front-proxy-client.key'), '-out', f('front-proxy-client.csr'), '-subj', '/CN=front-proxy-client', '-config', f('openssl.cnf'));
  openssl('x509', '-req', '-in', f('front-proxy-client.csr'), '-CA', f('front-proxy-ca.crt'), '-CAkey', f('front-proxy-ca.key'), '-CAcreateserial', '-out', f('front-proxy-client.crt'), '-days', '2', '-extfile', f('openssl.cnf'), '-extensions', 'client');
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f('sa.key'));
  openssl('pkey', '-in', f('sa.key'), '-pubout', '-out', f('sa.pub'));
  return {
    caCert: f('ca.crt'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    saKey: f('sa.key'),
    saPub: f('sa.pub'),
    kubeletClientCert: f('kubelet-client.crt'),
    kubeletClientKey: f('kubelet-client.key'),
    frontProxyCa: f('front-proxy-ca.crt'),
    frontProxyClientCert: f('front-proxy-client.crt'),
    frontProxyClientKey: f('front-proxy-client.key'),
  };
}

/** Spawns a binary with stdout and stderr appended to `log`. */
function spawnLogged(bin: string, args: string[], log: string): ChildProcess {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    running.add(child);
    child.once('exit', () => running.delete(child));
    return child;
  } finally {
    closeSync(fd);
  }
}

/** SIGTERM, SIGKILL after `graceMs` (at once with 0); resolves once it exited. */
async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const timer = graceMs > 0 ? setTimeout(() => child.kill('SIGKILL'), graceMs) : undefined;
  await exited(child);
  clearTimeout(timer);
}

/** Waits until `check` says yes; throws with the log's last lines if the process exits or time runs out. */
async function waitReady(what: string, check: () => Promise<string | true>, child: ChildProcess, log: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  const spawnError = new Promise<string>((res) => child.once('error', (e) => res(e.message)));
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready; ${tail(log)}`);
    const r = await Promise.race([check(), spawnError.then((m) => `cannot start: ${m}`)]);
    if (r === true) return;
    last = r;
    if (last.startsWith('cannot start')) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`${what} not ready after ${timeoutMs} ms (last: ${last}); ${tail(log)}`);
}

function tail(log: string, lines = 40): string {
  const text = existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '(no log)';
  return `last lines of ${log}:\n${text}`;
}

async function httpOk(url: string): Promise<string | true> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.status === 200 ? true : `HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** GET over TLS trusting `ca`: true on 200, else what came back. */
function httpsOk(url: string, ca: Buffer): Promise<string | true> {
  return new Promise((resolve) => {
    const req = request(url, { ca, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 ? true : `HTTP ${res.statusCode ?? 0}: ${body.slice(0, 1000)}`));
      res.on('error', (e) => resolve(e.message));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
    req.on('error', (e) => resolve(e.message));
    req.end();
  });
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await fn()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
}

