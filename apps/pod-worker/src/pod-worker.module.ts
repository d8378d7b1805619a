import { Module } from '@nestjs/common';

/** podWorkers, syncPod, the runtime manager's SyncPod / computePodActions, killPod. */
@Module({})
export class PodWorkerModule {}
