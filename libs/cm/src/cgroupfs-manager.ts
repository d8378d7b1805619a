/**
 * The CgroupManager port on the host's cgroup files, the cgroupfs driver
 * (cgroup_manager_linux.go with libcontainer's fs and fs2 managers).
 *
 * cgroup v2 when the mount root is a cgroup2 file system (it has
 * cgroup.controllers): one directory per cgroup, the controllers enabled in
 * each parent's cgroup.subtree_control. Otherwise cgroup v1: the cgroup is
 * made in every v1 hierarchy mounted below the root (the directories with a
 * `tasks` file), and a new cpuset cgroup gets its parent's cpus and mems, as
 * libcontainer does, or no process could join it.
 */
import { access, mkdir, readFile, readdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CgroupManager, cgroupFiles, type CgroupName, type ResourceConfig } from './cgroup-manager.js';

const present = (path: string) => access(path).then(() => true, () => false);
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

export class CgroupfsManager extends CgroupManager {
  private layout?: Promise<{ version: 2 } | { version: 1; hierarchies: string[]; cpuset: Set<string> }>;

  constructor(private readonly mountRoot = '/sys/fs/cgroup') {
    super();
  }

  /** Which cgroup version, and for v1 the hierarchies: read once. */
  private detect() {
    this.layout ??= (async () => {
      if (await present(join(this.mountRoot, 'cgroup.controllers'))) return { version: 2 as const };
      const hierarchies: string[] = [];
      for (const entry of await readdir(this.mountRoot)) {
        const dir = join(this.mountRoot, entry);
        if ((await stat(dir)).isDirectory() && (await present(join(dir, 'tasks')))) hierarchies.push(dir);
      }
      if (hierarchies.length === 0) throw new Error(`no cgroup v1 hierarchy and no cgroup v2 under ${this.mountRoot}`);
      const cpuset = new Set<string>();
      for (const h of hierarchies) if (await present(join(h, 'cpuset.cpus'))) cpuset.add(h);
      return { version: 1 as const, hierarchies, cpuset };
    })();
    return this.layout;
  }

  async exists(name: CgroupName): Promise<boolean> {
    const layout = await this.detect();
    const dirs = layout.version === 2 ? [this.mountRoot] : layout.hierarchies;
    for (const h of dirs) if (!(await present(join(h, ...name)))) return false;
    return true;
  }

  async create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    const layout = await this.detect();
    if (layout.version === 2) return this.createV2(name, resources);
    const files = cgroupFiles(resources, 1);
    // The hierarchies side by side; in each the cgroup's own directory first, its parents walked only when one is
    // missing (a pod's cgroup: one mkdir per hierarchy instead of one per level).
    await Promise.all(
      layout.hierarchies.map(async (h) => {
        const isCpuset = layout.cpuset.has(h);
        const dir = join(h, ...name);
        const made = await mkdir(dir).then(
          () => true,
          (err: unknown) => {
            if (code(err) === 'EEXIST') return true;
            if (code(err) === 'ENOENT') return false;
            throw err;
          },
        );
        for (let depth = made ? name.length : 1; depth <= name.length; depth++) {
          const level = join(h, ...name.slice(0, depth));
          if (!made)
            await mkdir(level).catch((err: unknown) => {
              if (code(err) !== 'EEXIST') throw err;
            });
          if (isCpuset) for (const f of ['cpuset.cpus', 'cpuset.mems']) await this.copyIfEmpty(join(level, f), join(level, '..', f));
        }
        for (const [file, value] of Object.entries(files)) if (await present(join(dir, file))) await writeFile(join(dir, file), value);
      }),
    );
  }

  private async createV2(name: CgroupName, resources: ResourceConfig): Promise<void> {
    for (let depth = 0; depth < name.length; depth++) {
      const parent = join(this.mountRoot, ...name.slice(0, depth));
      // The controllers the parent has, enabled for its children (those already enabled are no-ops).
      const available = (await readFile(join(parent, 'cgroup.controllers'), 'utf8')).split(/\s+/).filter((c) => ['cpu', 'cpuset', 'memory', 'pids', 'io', 'hugetlb'].includes(c));
      for (const c of available) await writeFile(join(parent, 'cgroup.subtree_control'), `+${c}`).catch(() => undefined);
      await mkdir(join(parent, name[depth] ?? '')).catch((err: unknown) => {
        if (code(err) !== 'EEXIST') throw err;
      });
    }
    const dir = join(this.mountRoot, ...name);
    for (const [file, value] of Object.entries(cgroupFiles(resources, 2))) if (await present(join(dir, file))) await writeFile(join(dir, file), value);
  }

  async destroy(name: CgroupName): Promise<void> {
    const layout = await this.detect();
    const dirs = layout.version === 2 ? [this.mountRoot] : layout.hierarchies;
    for (const h of dirs) await this.removeTree(join(h, ...name));
  }

  /** libcontainer's RemovePath: children first; rmdir retried while busy (the last processes exiting), 5 times from 10ms doubling. */
  private async removeTree(dir: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (code(err) === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) if (e.isDirectory()) await this.removeTree(join(dir, e.name));
    for (let attempt = 0, delay = 10; ; attempt++, delay *= 2) {
      try {
        await rmdir(dir);
        return;
      } catch (err) {
        if (code(err) === 'ENOENT') return;
        if (code(err) !== 'EBUSY' || attempt >= 5) throw err;
        await sleep(delay);
      }
    }
  }

  async pids(name: CgroupName): Promise<number[]> {
    const layout = await this.detect();
    const dirs = layout.version === 2 ? [this.mountRoot] : layout.hierarchies;
    const found = new Set<number>();
    for (const h of dirs) for (const pid of await this.procsBelow(join(h, ...name))) found.add(pid);
    return [...found];
  }

  async children(name: CgroupName): Promise<string[]> {
    const layout = await this.detect();
    const dirs = layout.version === 2 ? [this.mountRoot] : layout.hierarchies;
    const found = new Set<string>();
    for (const h of dirs) for (const e of await readdir(join(h, ...name), { withFileTypes: true }).catch(() => [])) if (e.isDirectory()) found.add(e.name);
    return [...found].sort();
  }

  /** cgroup.procs of `dir` and of every cgroup below it (libcontainer's GetAllPids). */
  private async procsBelow(dir: string): Promise<number[]> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (code(err) === 'ENOENT') return [];
      throw err;
    }
    const own = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    const pids = own.split('\n').map(Number).filter((p) => Number.isInteger(p) && p > 0);
    for (const e of entries) if (e.isDirectory()) pids.push(...(await this.procsBelow(join(dir, e.name))));
    return pids;
  }

  private async copyIfEmpty(file: string, from: string): Promise<void> {
    if ((await readFile(file, 'utf8')).trim() !== '') return;
    await writeFile(file, (await readFile(from, 'utf8')).trim());
  }
}
