/** The log server's providers (ADR 0014: status-manager serves `/containerLogs`), spread into the module. */
import type { Provider } from '@nestjs/common';
import { Clock } from '@app/clock';
import type { CriRuntime } from '@app/cri';
import { SERVICE_CONFIG } from '@app/service';
import type { StatusManagerConfig } from '../status-manager.config.js';
import { NODE_CRI } from '../node/node.providers.js';
import { StatusManager } from '../status-manager.js';
import { LeaderGate } from '../takeover-replay.js';
import { ContainerLogs } from './container-logs.js';
import { CriLogRuntime } from './cri-log-runtime.js';
import { FsLogFiles } from './fs-log-files.js';
import { LogFiles, LogPods, LogRuntime } from './ports.js';

export const logsProviders: Provider[] = [
  { provide: LogRuntime, inject: [NODE_CRI], useFactory: (cri: CriRuntime) => new CriLogRuntime(cri) },
  { provide: LogFiles, useClass: FsLogFiles },
  {
    provide: LogPods,
    inject: [StatusManager, LeaderGate],
    // The pods as `/pods` serves them: a standby reads `pod-status` afresh.
    useFactory: (manager: StatusManager, gate: LeaderGate): LogPods => ({
      getPod: async (namespace, name) => {
        if (!gate.isActing) await manager.restore({ readOnly: true });
        return manager.getPod(namespace, name);
      },
    }),
  },
  {
    provide: ContainerLogs,
    inject: [LogPods, LogRuntime, LogFiles, Clock, SERVICE_CONFIG],
    useFactory: (pods: LogPods, runtime: LogRuntime, files: LogFiles, clock: Clock, cfg: StatusManagerConfig) => new ContainerLogs(pods, runtime, files, clock, cfg.POD_LOGS_DIR),
  },
];
