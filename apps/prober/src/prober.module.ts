import { Module } from '@nestjs/common';

/** prober.Manager, its workers and the results managers. */
@Module({})
export class ProberModule {}
