import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * The cores this process may use: the CPUs it may run on, bounded by a cgroup CPU quota when one is set (a container
 * with `cpus: 2` or a Kubernetes CPU limit of 2 on a 16-core machine is 2). Node 20's `availableParallelism` sees
 * the CPUs, not the quota.
 */
export function usableCores(readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): number {
  const cpus = availableParallelism();
  const quota = cgroupQuota(readFile);
  return quota === null ? cpus : Math.max(1, Math.min(cpus, Math.ceil(quota)));
}

/** cores allowed by the cgroup (v2 `cpu.max`, else v1 `cfs_quota_us / cfs_period_us`); null when unlimited or unknown */
function cgroupQuota(readFile: (path: string) => string): number | null {
  try {
    const [quota, period] = readFile('/sys/fs/cgroup/cpu.max').trim().split(/\s+/);
    if (quota === 'max') return null;
    const q = Number(quota);
    const p = Number(period);
    return q > 0 && p > 0 ? q / p : null;
  } catch {
    // not cgroup v2
  }
  try {
    const q = Number(readFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us').trim());
    const p = Number(readFile('/sys/fs/cgroup/cpu/cpu.cfs_period_us').trim());
    return q > 0 && p > 0 ? q / p : null;
  } catch {
    return null;
  }
}
