/** SIGKILL to a process of the host; one already gone is fine (tryKillingCgroupProcesses' killOnePid). */
export async function killHostProcess(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
  await Promise.resolve();
}
