/** The web console's providers, spread into the module (console.controller.ts serves it). */
import type { Provider } from '@nestjs/common';
import { Clock } from '@app/clock';
import { StatusManager } from '../status-manager.js';
import { LeaderGate } from '../takeover-replay.js';
import { ConsoleFeed, ConsolePods } from './console-feed.js';

export const consoleProviders: Provider[] = [
  {
    provide: ConsolePods,
    inject: [StatusManager, LeaderGate],
    // The pods as `/pods` serves them: a standby reads `pod-status` afresh.
    useFactory: (manager: StatusManager, gate: LeaderGate): ConsolePods => ({
      listPods: async () => {
        if (!gate.isActing) await manager.restore({ readOnly: true });
        return manager.listPods();
      },
      onStatusChanged: (listener) => manager.onStatusChanged(listener),
      onEvent: (listener) => manager.onEvent(listener),
    }),
  },
  { provide: ConsoleFeed, inject: [ConsolePods, Clock], useFactory: (pods: ConsolePods, clock: Clock) => new ConsoleFeed(pods, clock) },
];
