#!/usr/bin/env node
// Builds the web console (npm run build): the TypeScript and CSS under
// src/ bundled by esbuild into dist/console/ beside index.html, where
// status-manager serves them (/console). Everything the page needs is in
// the bundle: no CDN, no network at run time.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', '..', '..', 'dist', 'console');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(here, 'src', 'main.ts') },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  outdir: out,
  logLevel: 'warning',
});
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
