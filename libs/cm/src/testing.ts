import { CgroupManager, type CgroupName, type ResourceConfig } from './cgroup-manager.js';

/** A cgroup tree in memory: cgroups by literal name, the processes in each; records what was destroyed. */
export class FakeCgroupManager extends CgroupManager {
  readonly cgroups = new Map<string, ResourceConfig>();
  /** Processes by the literal name of the cgroup they are in. */
  readonly procs = new Map<string, number[]>();
  readonly destroyed: string[] = [];
  /** Makes destroy fail with this message. */
  failDestroy?: string;

  /** Adds a cgroup (and its parents) with `pids` in it. */
  add(name: string, pids: number[] = []): void {
    const parts = name.split('/').filter((s) => s !== '');
    for (let i = 1; i <= parts.length; i++) if (!this.cgroups.has(`/${parts.slice(0, i).join('/')}`)) this.cgroups.set(`/${parts.slice(0, i).join('/')}`, {});
    if (pids.length > 0) this.procs.set(name, pids);
  }
  exists(name: CgroupName): Promise<boolean> {
    return Promise.resolve(this.cgroups.has(`/${name.join('/')}`));
  }
  create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    this.add(`/${name.join('/')}`);
    this.cgroups.set(`/${name.join('/')}`, resources);
    return Promise.resolve();
  }
  destroy(name: CgroupName): Promise<void> {
    if (this.failDestroy) return Promise.reject(new Error(this.failDestroy));
    const key = `/${name.join('/')}`;
    for (const k of [...this.cgroups.keys()]) if (k === key || k.startsWith(`${key}/`)) this.cgroups.delete(k);
    this.destroyed.push(key);
    return Promise.resolve();
  }
  pids(name: CgroupName): Promise<number[]> {
    const key = `/${name.join('/')}`;
    return Promise.resolve([...this.procs].filter(([k]) => k === key || k.startsWith(`${key}/`)).flatMap(([, p]) => p));
  }
  children(name: CgroupName): Promise<string[]> {
    const prefix = `/${name.join('/')}/`;
    return Promise.resolve([...this.cgroups.keys()].filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('/')).map((k) => k.slice(prefix.length)).sort());
  }
}
