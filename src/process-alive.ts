/**
 * True while process `pid` runs (EPERM: it runs as another user). A leaf every layer may
 * read: the run lock, the temp files' and memo files' leftovers and the results cache's
 * unsynced marks all ask whether the process that left something is still there.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
