import { Module } from '@nestjs/common';

/** config.PodConfig: file, http and apiserver sources turned into PodUpdate operations. */
@Module({})
export class ConfigSourceModule {}
