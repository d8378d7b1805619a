#!/usr/bin/env node
// Bundles each service's entry point, and the one-process entry
// (apps/kubelet), into one file each under dist/bundle/ (npm run build, after
// tsc): dist/bundle/<service>.mjs and dist/bundle/kubelet.mjs, their shared
// code in dist/bundle/chunks/, with source maps. A service started from its bundle reads one file instead of resolving
// some 1200 modules one by one, which is most of its cold start (issue 16,
// P5; docs/adr/0016-one-process-mode.md). The input is tsc's output, so
// Nest's decorator metadata is already there. Left out: packages Nest or
// pino load only when asked for (optional transports and pretty-printing),
// and @kubernetes/client-node, imported only when a node joins a cluster
// (from node_modules then, as without the bundle).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = ['config-source', 'sync-loop', 'pod-worker', 'pleg', 'prober', 'status-manager', 'cri-gateway', 'kubelet'];
const EXTERNAL = [
  '@kubernetes/client-node',
  // Nest's optional peers (loaded with loadPackage only when used)
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  '@nestjs/platform-fastify',
  'class-validator',
  'class-transformer',
  '@grpc/proto-loader',
  'kafkajs',
  'mqtt',
  'nats',
  'ioredis',
  'amqplib',
  'amqp-connection-manager',
  'pino-pretty',
];

rmSync(join(root, 'dist', 'bundle'), { recursive: true, force: true }); // no chunk of an earlier build lingers

// One build with code splitting: each entry point stays a small file that turns on the compile cache and then
// imports its chunks, so the chunks are compiled with the cache on (main.ts), and the seven services share them.
await build({
  entryPoints: Object.fromEntries(ENTRIES.map((entry) => [entry, join(root, 'dist', 'apps', entry, 'src', 'main.js')])),
  outdir: join(root, 'dist', 'bundle'),
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  sourcemap: 'linked',
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle still call require and read __dirname.
  banner: {
    js: [
      "import { createRequire as __ksCreateRequire } from 'node:module';",
      "import { dirname as __ksDirname } from 'node:path';",
      "import { fileURLToPath as __ksFileURLToPath } from 'node:url';",
      'const require = __ksCreateRequire(import.meta.url);',
      'const __filename = __ksFileURLToPath(import.meta.url);',
      'const __dirname = __ksDirname(__filename);',
    ].join('\n'),
  },
  logLevel: 'warning',
});
