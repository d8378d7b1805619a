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
// (from node_modules then, as without the bundle: a runtime dependency, which
// the image's `npm prune --omit=dev` keeps; test/dependencies.spec.ts).
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = ['config-source', 'sync-loop', 'pod-worker', 'pleg', 'prober', 'status-manager', 'kubelet-server', 'node-status', 'console', 'cri-gateway', 'kubelet'];
const EXTERNAL = [
  '@kubernetes/client-node',
  // Nest's optional peers (loaded with loadPackage only when used; platform-express only without an HTTP
  // adapter of our own, and every service has one: libs/service http-adapter.ts)
  '@nestjs/platform-express',
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

// `node:http` through require, not as an ES module. Node builds an ES module's view of a builtin from all of its
// exports, and http's include WebSocket, CloseEvent and MessageEvent, lazy getters that load undici (node's fetch,
// 0.7 MB of source): an `import ... from 'node:http'` anywhere (Nest's core has one) cost every process about
// 14 MB of RSS and 2.6 MB of heap for code no service runs (docs/adr/0018). The bundle's modules import it from
// this stand-in instead, which requires it and exports its values; the lazy three are left out.
const http = createRequire(import.meta.url)('node:http');
const HTTP_EXPORTS = Object.entries(Object.getOwnPropertyDescriptors(http))
  .filter(([name, d]) => 'value' in d && /^[A-Za-z_$][\w$]*$/.test(name))
  .map(([name]) => name);
const httpByRequire = {
  name: 'node-http-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (a) => (a.namespace === 'ks-http' ? { path: 'node:http', external: true } : { path: 'node:http', namespace: 'ks-http' }));
    b.onLoad({ filter: /.*/, namespace: 'ks-http' }, () => ({
      contents: [
        "const http = require('node:http');",
        'export default http;',
        `export const { ${HTTP_EXPORTS.join(', ')} } = http;`,
        'export const maxHeaderSize = http.maxHeaderSize;',
        'export const globalAgent = http.globalAgent;',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

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
  plugins: [httpByRequire],
  logLevel: 'warning',
});

// Every output in ASCII. esbuild escapes non-ASCII characters in strings (charset ascii, its default) but leaves
// those in comments and regular expressions as they are, and Node decodes a module's source with any non-ASCII byte
// into a two-byte string: the chunks of Nest and express (a comment's "¥"), of our libs (a "—" in a comment) took
// twice their size in memory, about 3.6 MB of the one process's (docs/adr/0018-idle-footprint.md). A \uXXXX escape
// means the same character in a string, a regular expression or an identifier, and is text in a comment.
for (const dir of [join(root, 'dist', 'bundle'), join(root, 'dist', 'bundle', 'chunks')]) {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.mjs')) continue;
    const file = join(dir, name);
    const text = readFileSync(file, 'utf8');
    // eslint-disable-next-line no-control-regex
    if (/[^\x00-\x7f]/.test(text)) writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  }
}
