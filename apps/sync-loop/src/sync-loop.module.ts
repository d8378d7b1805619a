import { Module } from '@nestjs/common';

/** syncLoop / syncLoopIteration, podManager, admission, workQueue, housekeeping. */
@Module({})
export class SyncLoopModule {}
