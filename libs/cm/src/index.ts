export {
  CgroupManager,
  DEFAULT_CPU_PERIOD_US,
  MAX_SHARES,
  MIN_SHARES,
  POD_CGROUP_PREFIX,
  QOS_CLASSES,
  cgroupFiles,
  cgroupfsName,
  cpuSharesToWeight,
  destroyKillingProcesses,
  podUidOfCgroup,
  qosCgroupName,
  type CgroupName,
  type ResourceConfig,
} from './cgroup-manager.js';
export { CgroupfsManager } from './cgroupfs-manager.js';
export { killHostProcess } from './host-processes.js';
