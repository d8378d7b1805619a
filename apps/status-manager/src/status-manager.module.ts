import { Module } from '@nestjs/common';

/** status.Manager: the versioned API pod status and the read API. */
@Module({})
export class StatusManagerModule {}
