/** The exec probe (pkg/probe/exec through RunInContainer): the command with the container's static env expanded. */
import type { Probe } from '@app/contracts';
import { expandContainerCommandOnlyStatic } from '@app/kube';
import { ContainerCommandRunner, doExecProbe, formatPod, unknownOutcome, type ProbeOutcome } from '@app/probe';
import { ProbeHandler, type ProbeTarget } from './probe-handler.js';

export class ExecProbeHandler extends ProbeHandler {
  constructor(private readonly commands: ContainerCommandRunner) {
    super();
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    // Exec probes see only the container's static env, not the downward API (ExpandContainerCommandOnlyStatic).
    const cmd = expandContainerCommandOnlyStatic(probe.exec?.command ?? [], target.container.env);
    if (cmd.length === 0) return unknownOutcome(`exec probe of ${formatPod(target.pod)}:${target.container.name} has no command`);
    return doExecProbe(this.commands, target.containerId, cmd, timeoutMs);
  }
}
