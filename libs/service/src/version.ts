import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's package name: the package.json whose version is the build's. */
const PROJECT = 'kubelet-split';

/**
 * The version this code was built as: `version` of the nearest package.json
 * named kubelet-split at or above `from` (the checkout's; in the image,
 * /app/package.json, which the Dockerfile's VERSION build argument stamps).
 * `read` returns a file's text or undefined when there is none. Throws when
 * no such package.json is found: a build that cannot say its version is
 * broken (docs/adr/0037-rolling-upgrade.md).
 */
export function findProjectVersion(from: string, read: (path: string) => string | undefined): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const text = read(join(dir, 'package.json'));
    if (text !== undefined) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === PROJECT && typeof pkg.version === 'string' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json named ${PROJECT} with a version at or above ${from}`);
  }
}

const readIfExists = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
};

let cached: string | undefined;

/** The running build's version (findProjectVersion from this module's file: dist/libs/service/src, or dist/bundle). */
export function projectVersion(): string {
  cached ??= findProjectVersion(dirname(fileURLToPath(import.meta.url)), readIfExists);
  return cached;
}
