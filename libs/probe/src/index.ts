export { CriCommandRunner, NetTcpDialer, NodeHttpClient } from './adapters.js';
export { doExecProbe, runInContainer } from './exec.js';
export type { RunInContainerResult } from './exec.js';
export { canonicalHeaderName, doHttpGet, httpProbeOutcome, newRequestForHttpGetAction, probeHeaders } from './http.js';
export type { HttpGetResult } from './http.js';
export { LifecycleHandlerRunner } from './lifecycle.js';
export type { LifecycleHandlerRunnerDeps, LifecycleHookTarget } from './lifecycle.js';
export { ContainerCommandRunner, HTTP_RESPONSE_TO_HTTPS_CLIENT, HttpClient, TcpDialer } from './ports.js';
export type { ExecSyncResult, HttpRequest, HttpResponse } from './ports.js';
export {
  KUBE_LIFECYCLE_USER_AGENT,
  KUBE_PROBE_USER_AGENT,
  KUBE_VERSION,
  MAX_PROBE_OUTPUT_BYTES,
  dialErrorText,
  errorText,
  failureOutcome,
  formatPod,
  kubeUserAgent,
  resolveContainerPort,
  unknownOutcome,
} from './probe.js';
export type { ProbeOutcome, ProbeResult } from './probe.js';
export { doTcpProbe } from './tcp.js';
