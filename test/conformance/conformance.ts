/**
 * `npm run conformance`: the upstream node conformance suite (k8s.io/kubernetes
 * v1.34.4 `test/e2e`, the `[NodeConformance]` specs) against kubelet-split, or
 * against the upstream kubelet v1.34.4 for the baseline, on this machine:
 *
 *  1. builds what is missing into the caches (deploy/conformance/build.sh:
 *     e2e.test, the ginkgo CLI, kube-scheduler, kube-controller-manager, agnhost,
 *     nonewprivs; deploy/control-plane/build.sh: etcd, kube-apiserver, kubectl;
 *     deploy/upstream-kubelet/build.sh for the baseline);
 *  2. brings up a control plane on loopback (test/support/control-plane.ts: etcd,
 *     kube-apiserver with the Node and RBAC authorizers, plus here the scheduler
 *     and the controller-manager, which the specs need: they do not set nodeName,
 *     and they wait for each namespace's `default` ServiceAccount and
 *     `kube-root-ca.crt`), the apiserver authenticating to the kubelet with a
 *     client certificate;
 *  3. gives the node a pod network of its own: a bridge made here with the
 *     node's IP on it (the Node's InternalIP, where the apiserver reaches the
 *     kubelet and the pods reach host-network pods; never an address outside
 *     this machine) and a containerd of its own on that bridge
 *     (deploy/runtime.sh with KS_RUNTIME_STATE/ROOT and KS_CNI_BRIDGE/SUBNET),
 *     with the suite's images imported (deploy/conformance/images.sh);
 *  4. joins the node: kubelet-split's seven services on a nats-server of their
 *     own (two pod-worker replicas) as the launcher runs them, or (`--deploy
 *     compose`) the compose stack with its images built locally as the compose
 *     lane builds them (deploy/compose/images.sh, docker-compose.yml joined with
 *     NODE_KUBECONFIG: test/support/compose-node.ts, docs/adr/0036), or the
 *     upstream kubelet in its private mount namespace
 *     (deploy/upstream-kubelet/run.sh), and waits for the Node to be Ready;
 *  5. runs the focus with ginkgo in `--procs` parallel processes, keeps the
 *     JSON and JUnit reports, and prints a table by area: passed, failed,
 *     skipped, then each failure's first line.
 *
 * Everything it started is stopped at the end (or on Ctrl-C); the results stay
 * in `--out` (default /var/tmp/kubelet-split/conformance/<kubelet>-<time>):
 * report.json, junit.xml, summary.md, ginkgo.log and logs/ (every service's,
 * the control plane's, the kubelet's).
 *
 * `--suite conformance` runs upstream's whole `[Conformance]` set instead, on a
 * cluster of `--nodes` nodes (default 2): the fleet runner's nodes
 * (test/fleet/fleet-cluster.ts), kubelet-split's or, with `--kubelet upstream`,
 * upstream kubelets (each in its private mount namespace with its own
 * containerd), made a conformant cluster: the apiserver on the control plane's
 * own bridge (pods reach it through the `kubernetes` Service), kube-proxy in
 * iptables mode, CoreDNS as `kube-dns` (10.96.0.10, cluster.local, the
 * kubelets' clusterDNS/clusterDomain), every node's containerd with the
 * wider suite's images (deploy/conformance/images.sh --cluster). It reads
 * the machine's iptables rules and sysctls before and checks them after
 * (summary.md's last line). docs/adr/0039-conformance-cluster.md.
 *
 *   npm run conformance -- [--suite node|conformance] [--nodes N] [--kubelet split|upstream] [--deploy launcher|compose]
 *                          [--focus RE] [--skip RE] [--procs N] [--out DIR] [--timeout 4h] [--e2e-arg=--FLAG=V ...]
 *   npm run conformance -- [--suite conformance] --compare SPLIT_RUN[,RUN...] UPSTREAM_RUN[,RUN...]
 *
 * Needs root (containerd, the bridge, cgroups), openssl, iproute2 and jq-free
 * Node 24; the first build takes about 10 minutes of Go.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, exited, startNats, stopProcess, type NatsServer, type ServiceProcess } from '../../deploy/local/stack.js';
import { ComposeNode } from '../support/compose-node.js';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { deleteBridge, ensureBridge, lineSink as sharedLineSink, startControllers as startControllers_, startSplitNode as startSplitServices, unmountUnder, waitNodeReady } from '../support/cluster-node.js';
import { startUpstreamNode } from '../support/upstream-kubelet.js';
import { Fleet } from '../fleet/fleet-cluster.js';
import { Cleanups } from './cleanups.js';
import { areaTable, readGinkgoReport, sideBySide, type SpecResult } from './report.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    compare: { type: 'boolean', default: false },
    kubelet: { type: 'string', default: 'split' },
    deploy: { type: 'string', default: 'launcher' },
    suite: { type: 'string', default: 'node' },
    nodes: { type: 'string', default: '2' },
    focus: { type: 'string', default: '' },
    skip: { type: 'string', default: '' },
    procs: { type: 'string', default: '3' },
    out: { type: 'string', default: '' },
    timeout: { type: 'string', default: '4h' },
    // More flags for e2e.test, e.g. --e2e-arg=--delete-namespace-on-failure=false to keep a failed spec's pods.
    'e2e-arg': { type: 'string', multiple: true, default: [] },
  },
});

const say = (line: string) => process.stdout.write(`conformance | ${line}\n`);
function fail(message: string): never {
  process.stderr.write(`conformance: ${message}\n`);
  process.exit(2);
}

if (args.suite !== 'node' && args.suite !== 'conformance') fail(`--suite must be node ([NodeConformance] on one node) or conformance ([Conformance] on a cluster of --nodes nodes), got "${args.suite}"`);
const suite = args.suite;
args.focus ||= suite === 'node' ? '\\[NodeConformance\\]' : '\\[Conformance\\]';
const clusterNodes = Number(args.nodes);
if (!Number.isInteger(clusterNodes) || clusterNodes < 1 || clusterNodes > 10) fail(`--nodes must be 1 to 10, got "${args.nodes}"`);

if (args.compare) {
  compareRuns(positionals);
  process.exit(0);
}
if (positionals.length > 0) fail(`unexpected arguments: ${positionals.join(' ')} (--compare takes two)`);
if (args.kubelet !== 'split' && args.kubelet !== 'upstream') fail(`--kubelet must be split or upstream, got "${args.kubelet}"`);
const procs = Number(args.procs);
if (!Number.isInteger(procs) || procs < 1) fail(`--procs must be a positive integer, got "${args.procs}"`);
try {
  new RegExp(args.focus);
  if (args.skip) new RegExp(args.skip);
} catch (err) {
  fail(`--focus / --skip: ${(err as Error).message}`);
}
if (args.deploy !== 'launcher' && args.deploy !== 'compose') fail(`--deploy must be launcher or compose, got "${args.deploy}"`);
if (args.deploy === 'compose' && args.kubelet !== 'split') fail('--deploy compose deploys kubelet-split: not with --kubelet upstream');
if (args.deploy === 'compose' && suite === 'conformance') fail('--suite conformance runs on a fleet of launcher-run nodes: not with --deploy compose');
const kubeletKind = args.kubelet;
/** What runs as the node: kubelet-split by the launcher's way or by compose, or the upstream kubelet. */
const nodeKind = args.deploy === 'compose' ? 'compose' : kubeletKind;

/**
 * `--compare RUNS RUNS`: two agents' results side by side. Each RUNS is a
 * run's `--out` directory, or several separated by commas whose reports are
 * merged (a spec a run left out, e.g. by `--skip '\[Slow\]'`, takes its
 * outcome from the run that ran it; a spec run again in a later run takes
 * the later outcome). The agent's name is the run's
 * (`summary.md`'s first line).
 */
function compareRuns(sides: string[]): void {
  if (sides.length !== 2) fail(`--compare takes two runs (each an --out directory, or several joined by commas), got ${sides.length}`);
  const focus = new RegExp(args.focus);
  const skip = args.skip ? new RegExp(args.skip) : undefined;
  const side = (list: string) => {
    const dirs = list.split(',').filter((d) => d !== '');
    const merged = new Map<string, SpecResult>();
    let agent = '';
    for (const dir of dirs) {
      const report = join(dir, 'report.json');
      if (!existsSync(report)) fail(`no report.json in ${dir}`);
      const summary = existsSync(join(dir, 'summary.md')) ? readFileSync(join(dir, 'summary.md'), 'utf8') : '';
      agent ||= /--kubelet upstream/.test(summary.split('\n')[0] ?? '') ? 'upstream kubelet v1.34.4' : 'kubelet-split';
      for (const r of readGinkgoReport(readFileSync(report, 'utf8'), focus, skip)) {
        const have = merged.get(r.name);
        // A later run of a spec (a rerun after a fix) replaces an earlier one's outcome; a skip replaces nothing.
        if (!have || r.outcome !== 'skipped') merged.set(r.name, r);
      }
    }
    return { agent, results: [...merged.values()] };
  };
  process.stdout.write(`${sideBySide(side(sides[0] ?? ''), side(sides[1] ?? ''))}\n`);
}

/** The node and its network: one per kind, so that a baseline run never meets the stack's pods or a split run's. */
const NETWORK = {
  split: { node: 'ks-conformance', bridge: 'ks-conf0', subnet: '10.88.78.0/24', ip: '10.88.78.1', state: '/run/kubelet-split-conformance', root: '/var/lib/kubelet-split-conformance' },
  upstream: { node: 'ks-conformance-upstream', bridge: 'ks-confu0', subnet: '10.88.79.0/24', ip: '10.88.79.1', state: '', root: '' },
  compose: { node: 'ks-conformance-compose', bridge: 'ks-confc0', subnet: '10.88.143.0/24', ip: '10.88.143.1', state: '/run/kubelet-split-conformance-compose', root: '/var/lib/kubelet-split-conformance-compose' },
}[nodeKind];
const NODE = NETWORK.node;

/**
 * One run of a kind at a time: the node, its bridge and its containerd are the kind's. A lock
 * directory holding the runner's pid; one left by a runner that is gone is taken over.
 */
function takeLock(): void {
  const lock = `/run/kubelet-split-conformance-${nodeKind}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      cleanups.push({ what: 'the lock', run: () => rmSync(lock, { recursive: true, force: true }) });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(join(lock, 'pid'), 'utf8').trim() || 0);
      let alive = false;
      try {
        alive = pid > 0 && (process.kill(pid, 0), true);
      } catch {
        alive = false;
      }
      if (alive) fail(`another npm run conformance of ${nodeKind} is running (pid ${pid}, ${lock}): one at a time, the node and its network are the same`);
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d+Z$/, 'Z');
const out = resolve(args.out || join('/var/tmp/kubelet-split/conformance', `${nodeKind}-${stamp}`));
const logs = join(out, 'logs');
const work = join(out, 'work');
mkdirSync(logs, { recursive: true });
mkdirSync(work, { recursive: true });
// The control plane copies its logs there when it stops (test/support/control-plane.ts).
process.env['KS_E2E_LOGS'] = logs;

/**
 * Runs a script of the repository and returns its last line of output (the scripts print their result there).
 * `ownSession`: in a session of its own (setsid -w), so that a Ctrl-C to the runner's process group during the
 * cleanup cannot cut it (the containerd stop).
 */
function script(path: string, scriptArgs: string[] = [], env: NodeJS.ProcessEnv = {}, ownSession = false): Promise<string> {
  return new Promise((res, rej) => {
    const argv = ['bash', join(REPO_ROOT, path), ...scriptArgs];
    const child = execFile(ownSession ? 'setsid' : 'bash', ownSession ? ['-w', ...argv] : argv.slice(1), { encoding: 'utf8', maxBuffer: 16 << 20, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      err ? rej(new Error(`${path} ${scriptArgs.join(' ')} failed: ${err.message}\n${stderr.slice(-3000)}`)) : res(stdout.trim().split('\n').pop() ?? ''),
    );
    child.stderr?.on('data', (d: Buffer) => appendFileSync(join(logs, 'build.log'), d));
  });
}

/** A CA for the kubelet's clients and the apiserver's client certificate (CN kube-apiserver-kubelet-client, O system:masters). */
function kubeletClientPki(dir: string): { ca: string; cert: string; key: string } {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (n: string) => join(dir, n);
  const openssl = (...a: string[]) => execFileSync('openssl', a, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  writeFileSync(f('ext.cnf'), ['[ca]', 'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign,digitalSignature', '[client]', 'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature,keyEncipherment', 'extendedKeyUsage = clientAuth', ''].join('\n'));
  openssl('req', '-x509', ...ec, '-keyout', f('kubelet-client-ca.key'), '-out', f('kubelet-client-ca.crt'), '-days', '2', '-subj', '/CN=kubelet-client-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature');
  openssl('req', '-new', ...ec, '-keyout', f('apiserver-kubelet-client.key'), '-out', f('apiserver-kubelet-client.csr'), '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client');
  openssl('x509', '-req', '-in', f('apiserver-kubelet-client.csr'), '-CA', f('kubelet-client-ca.crt'), '-CAkey', f('kubelet-client-ca.key'), '-CAcreateserial', '-out', f('apiserver-kubelet-client.crt'), '-days', '2', '-extfile', f('ext.cnf'), '-extensions', 'client');
  return { ca: f('kubelet-client-ca.crt'), cert: f('apiserver-kubelet-client.crt'), key: f('apiserver-kubelet-client.key') };
}

/** What was started, stopped in reverse order. */
const cleanups = new Cleanups(say);
cleanups.onSignals((code) => process.exit(code));


function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * kubelet-split as compose deploys it (docker-compose.yml, deploy/compose/up.sh): the images built locally
 * (deploy/compose/images.sh, as the compose lane does), on a Docker engine of its own (deploy/compose/dockerd.sh,
 * KS_DOCKER_STATE/ROOT), the node's kubeconfig and the kubelet server's client CA in NODE_KUBE_DIR, the kubelet
 * server on the bridge's address (NODE_IP).
 */
async function startComposeNode(cp: ControlPlane, clientCa: string, runtimeSock: string): Promise<void> {
  const dockerEnv = { KS_DOCKER_STATE: process.env['KS_DOCKER_STATE'] ?? '/run/kubelet-split-conformance-docker', KS_DOCKER_ROOT: process.env['KS_DOCKER_ROOT'] ?? '/var/lib/kubelet-split-conformance-docker' };
  const dockerUp = await script('deploy/compose/dockerd.sh', ['status'], dockerEnv).then(() => true, () => false);
  await script('deploy/compose/dockerd.sh', ['start'], dockerEnv);
  if (!dockerUp) cleanups.push({ what: 'dockerd', run: async () => void (await script('deploy/compose/dockerd.sh', ['stop'], dockerEnv, true)) });
  const dockerHost = await script('deploy/compose/dockerd.sh', ['host'], dockerEnv);
  const tag = 'ks-conformance';
  say(`building the compose images (deploy/compose/images.sh ${tag})`);
  await script('deploy/compose/images.sh', [tag], { DOCKER_HOST: dockerHost });
  const node = new ComposeNode({
    project: 'ks-conformance',
    node: NODE,
    imageTag: tag,
    runtimeSocket: runtimeSock,
    runtimeRoot: join(NETWORK.root, 'containerd'),
    nodeIp: NETWORK.ip,
    cluster: { server: cp.url, caFile: cp.caFile, token: cp.token(NODE), clientCaFile: clientCa },
    cgroupRoot: '/kubelet-split-conformance-compose',
    parentDir: work,
    dockerHost,
  });
  cleanups.push({
    what: 'the compose node',
    run: async () => {
      writeFileSync(join(logs, 'compose.log'), await node.compose(['logs', '--no-color', '--timestamps']).catch((e: unknown) => (e as Error).message));
      await node.stop();
    },
  });
  await node.start();
  say(`the compose node: ${(await node.containers()).map((c) => c.service).join(', ')} healthy (${node.envFile})`);
}

const lineSink = (file: string) => sharedLineSink(logs, file);

async function startControllers(cp: ControlPlane, bin: string): Promise<void> {
  const stop = await startControllers_(cp, bin, logs);
  cleanups.push({ what: 'kube-controller-manager and kube-scheduler', run: stop });
}

/**
 * kubelet-split joined to the control plane as the launcher runs it: one process per service (two pod-worker
 * replicas) but the status group (STATUS_GROUP), which is one process of four modules.
 */
async function startSplitNode(cp: ControlPlane, clientCa: string, runtimeSock: string): Promise<void> {
  const nats: NatsServer = await startNats({ nodes: [NODE], sink: lineSink('nats-server.log') });
  cleanups.push({ what: 'nats-server', run: () => nats.stop() });
  const started: ServiceProcess[] = [];
  cleanups.push({
    what: 'kubelet-split',
    run: async () => {
      // Dependents first, cri-gateway last, as the launcher stops them (the group's modules share one process).
      for (const sp of [...started].reverse()) await sp.stop(15_000);
    },
  });
  started.push(
    ...(await startSplitServices({ node: NODE, natsUrl: nats.url, kubeconfig: cp.kubeconfig(NODE), clientCaFile: clientCa, ip: NETWORK.ip, runtimeSocket: runtimeSock, work, logs, cgroupRoot: '/kubelet-split-conformance' })),
  );
  say(`kubelet-split: ${started.map((s) => `${s.service}#${s.instance} :${s.port}`).join(', ')}`);
}

/** The upstream kubelet v1.34.4, in its private mount namespace with its own containerd (deploy/upstream-kubelet/run.sh). */
async function startUpstream(cp: ControlPlane, clientCa: string): Promise<string> {
  const kubelet = await script('deploy/upstream-kubelet/build.sh');
  const dir = join(work, 'kubelet');
  const { child, socket } = await startUpstreamNode({ kubelet, node: NODE, dir, kubeconfig: cp.kubeconfig(NODE), clientCaFile: clientCa, ip: NETWORK.ip, bridge: NETWORK.bridge, subnet: NETWORK.subnet, log: join(logs, 'kubelet.log') });
  cleanups.push({ what: 'the upstream kubelet and its containerd', run: () => stopProcess(child, 60_000) });
  return socket;
}

async function runSuite(cp: ControlPlane, conformanceBin: string, controlPlaneBin: string): Promise<number> {
  const ginkgoArgs = [
    `--procs=${procs}`,
    `--focus=${args.focus}`,
    ...(args.skip ? [`--skip=${args.skip}`] : []),
    `--timeout=${args.timeout}`,
    '--no-color',
    '--json-report=report.json',
    '--junit-report=junit.xml',
    `--output-dir=${out}`,
    join(conformanceBin, 'e2e.test'),
    '--',
    `--kubeconfig=${cp.kubeconfig('admin')}`,
    '--provider=skeleton',
    `--report-dir=${join(out, 'e2e')}`,
    ...(args['e2e-arg'] ?? []),
  ];
  say(`ginkgo ${ginkgoArgs.join(' ')}`);
  // A process group of its own: ginkgo's parallel e2e.test processes are stopped with it.
  const child = spawn(join(conformanceBin, 'ginkgo'), ginkgoArgs, {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${controlPlaneBin}:${process.env['PATH'] ?? ''}` },
    detached: true,
  });
  cleanups.push({
    what: 'ginkgo',
    run: async () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      // SIGINT: ginkgo interrupts its processes and still writes its reports; the group is killed after 30 s.
      child.kill('SIGINT');
      const pgid = child.pid;
      const t = setTimeout(() => killGroup(pgid), 30_000);
      await exited(child);
      clearTimeout(t);
      killGroup(pgid);
    },
  });
  const log = join(out, 'ginkgo.log');
  for (const s of [child.stdout, child.stderr]) {
    s?.on('data', (d: Buffer) => {
      appendFileSync(log, d);
      process.stdout.write(d);
    });
  }
  await exited(child);
  return child.exitCode ?? 1;
}

/** Lines the summary ends with (the cluster run's check of the machine). */
const extraSummary: string[] = [];

function printResults(results: SpecResult[]): void {
  const { table, failures } = areaTable(results, nodeKind === 'compose' ? 'kubelet-split (compose)' : kubeletKind === 'split' ? 'kubelet-split' : 'upstream kubelet v1.34.4');
  const where = suite === 'conformance' ? `${clusterNodes} nodes, ` : '';
  const text = [
    `# npm run conformance -- --kubelet ${kubeletKind}${nodeKind === 'compose' ? ' --deploy compose' : ''}${suite === 'conformance' ? ' --suite conformance' : ''}`,
    '',
    `focus \`${args.focus}\`${args.skip ? `, skip \`${args.skip}\`` : ''}, ${where}${procs} processes, ${new Date().toISOString()}`,
    '',
    table,
    '',
    failures,
    ...extraSummary,
  ].join('\n');
  writeFileSync(join(out, 'summary.md'), `${text}\n`);
  process.stdout.write(`\n${text}\n`);
}

/** Runs a script of the repository and returns all its output (images.sh prints an image a line). */
function scriptLines(path: string, scriptArgs: string[]): Promise<string[]> {
  return new Promise((res, rej) => {
    execFile('bash', [join(REPO_ROOT, path), ...scriptArgs], { encoding: 'utf8', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      appendFileSync(join(logs, 'build.log'), stderr);
      if (err) rej(new Error(`${path} ${scriptArgs.join(' ')} failed: ${err.message}\n${stderr.slice(-3000)}`));
      else res(stdout.trim().split('\n').filter((l) => l !== ''));
    });
  });
}

/**
 * `--suite conformance`: the whole [Conformance] suite on a fleet (test/fleet/fleet-cluster.ts) of
 * `--nodes` nodes, kubelet-split's or upstream kubelets, made a conformant cluster (docs/adr/0039):
 * the apiserver on the control plane's bridge, kube-proxy, CoreDNS, the suite's images on every node.
 */
async function mainCluster(t0: number): Promise<void> {
  say(`results in ${out}`);
  say('building what is missing (deploy/conformance/build.sh with kube-proxy, deploy/control-plane/build.sh kubectl, the suite\'s images)');
  const conformanceBin = await script('deploy/conformance/build.sh');
  await script('deploy/conformance/build.sh', ['kube-proxy']);
  const controlPlaneBin = await script('deploy/control-plane/build.sh', ['kubectl']);
  process.env['KS_CONTROL_PLANE_BIN'] = controlPlaneBin;
  const images = await scriptLines('deploy/conformance/images.sh', ['--cluster', '--no-import']);
  const coreDnsImage = images.find((i) => /\/coredns\/coredns:/.test(i));
  if (!coreDnsImage) throw new Error(`deploy/conformance/images.sh --cluster made no CoreDNS image (it made: ${images.join(', ')})`);
  const kubelet = kubeletKind === 'upstream' ? { kind: 'upstream' as const, bin: await script('deploy/upstream-kubelet/build.sh') } : { kind: 'split' as const };
  const fleet = await Fleet.start({
    nodes: clusterNodes,
    dir: out,
    say,
    kubelet,
    podWorkerReplicas: 2,
    conformant: {
      images: async (socket) => void (await scriptLines('deploy/conformance/images.sh', ['--cluster', '--address', socket])),
      coreDnsImage,
      kubeProxyBin: conformanceBin,
    },
  });
  let stopped = false;
  const stopFleet = async () => {
    if (stopped) return;
    stopped = true;
    await fleet.stop();
    extraSummary.push('', fleet.leftovers.length === 0 ? "After the run the machine's iptables rules (iptables-save, both families) and the watched sysctls were as before it." : `Left changed on the machine after the run: ${fleet.leftovers.join('; ')}`);
  };
  cleanups.push({ what: 'the cluster', run: stopFleet });
  writeFileSync(join(out, 'kubeconfig-admin.yaml'), readFileSync(fleet.cp.kubeconfig('admin')), { mode: 0o600 });
  say(`the cluster is up after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${fleet.members.map((m) => `${m.name} (${m.net.ip})`).join(', ')}; running the suite`);
  const code = await runSuite(fleet.cp, conformanceBin, controlPlaneBin);
  await stopFleet();
  const reportFile = join(out, 'report.json');
  if (!existsSync(reportFile)) throw new Error(`ginkgo exited ${code} and wrote no report (${join(out, 'ginkgo.log')})`);
  printResults(readGinkgoReport(readFileSync(reportFile, 'utf8'), new RegExp(args.focus), args.skip ? new RegExp(args.skip) : undefined));
  say(`done in ${((Date.now() - t0) / 60_000).toFixed(1)} min; results in ${out}`);
  process.exitCode = code === 0 && fleet.leftovers.length === 0 ? 0 : 1;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  if (suite === 'conformance') return mainCluster(t0);
  takeLock();
  // Last of all: whatever the node left mounted in the run's directory (it goes on without them).
  cleanups.push({ what: `the mounts under ${work}`, run: () => unmountUnder(work) });
  say(`results in ${out}`);
  say('building what is missing (deploy/conformance/build.sh, deploy/control-plane/build.sh kubectl)');
  const conformanceBin = await script('deploy/conformance/build.sh');
  const controlPlaneBin = await script('deploy/control-plane/build.sh', ['kubectl']);
  process.env['KS_CONTROL_PLANE_BIN'] = controlPlaneBin;

  ensureBridge(NETWORK);
  cleanups.push({ what: `the bridge ${NETWORK.bridge}`, run: () => deleteBridge(NETWORK) });
  const clientPki = kubeletClientPki(join(work, 'kubelet-client-pki'));

  say('starting the control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)');
  const cp = await startControlPlane({
    nodes: [NODE],
    apiserverArgs: [`--kubelet-client-certificate=${clientPki.cert}`, `--kubelet-client-key=${clientPki.key}`, '--kubelet-preferred-address-types=InternalIP'],
    readyTimeoutMs: 120_000,
  });
  cleanups.push({ what: 'the control plane', run: () => cp.stop() });
  await startControllers(cp, conformanceBin);
  writeFileSync(join(out, 'kubeconfig-admin.yaml'), readFileSync(cp.kubeconfig('admin')));

  let sock: string;
  if (kubeletKind === 'split') {
    const runtimeEnv = { KS_RUNTIME_STATE: NETWORK.state, KS_RUNTIME_ROOT: NETWORK.root, KS_CNI_BRIDGE: NETWORK.bridge, KS_CNI_SUBNET: NETWORK.subnet };
    say(`starting containerd (${NETWORK.state}) on the bridge ${NETWORK.bridge} ${NETWORK.subnet}`);
    await script('deploy/runtime.sh', ['start'], runtimeEnv);
    cleanups.push({ what: 'containerd', run: async () => void (await script('deploy/runtime.sh', ['stop'], runtimeEnv, true)) });
    sock = await script('deploy/runtime.sh', ['address'], runtimeEnv);
  } else {
    say(`starting the upstream kubelet v1.34.4 with its own containerd on the bridge ${NETWORK.bridge} ${NETWORK.subnet}`);
    sock = await startUpstream(cp, clientPki.ca);
  }
  say('importing the suite\'s images (deploy/conformance/images.sh)');
  await script('deploy/conformance/images.sh', ['--address', sock]);
  if (nodeKind === 'compose') {
    say('starting kubelet-split with compose');
    await startComposeNode(cp, clientPki.ca, sock);
  } else if (kubeletKind === 'split') {
    say('starting kubelet-split');
    await startSplitNode(cp, clientPki.ca, sock);
  }
  say(`waiting for the Node ${NODE} (InternalIP ${NETWORK.ip}) to be Ready`);
  await waitNodeReady(cp, NODE, 180_000);
  say(`the node is Ready after ${((Date.now() - t0) / 1000).toFixed(0)} s; running the suite`);

  const code = await runSuite(cp, conformanceBin, controlPlaneBin);
  const reportFile = join(out, 'report.json');
  if (!existsSync(reportFile)) throw new Error(`ginkgo exited ${code} and wrote no report (${join(out, 'ginkgo.log')})`);
  printResults(readGinkgoReport(readFileSync(reportFile, 'utf8'), new RegExp(args.focus), args.skip ? new RegExp(args.skip) : undefined));
  say(`done in ${((Date.now() - t0) / 60_000).toFixed(1)} min; results in ${out}`);
  process.exitCode = code === 0 ? 0 : 1;
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`conformance: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanups.run().catch(() => undefined))
  .catch(() => undefined);
