import { processAlive } from '../../src/process-alive.js';

/** A pid no process has (a finished child's pid can be reused at once on a busy machine). */
export function deadPid(): number {
  let pid = 4_194_303;
  while (processAlive(pid)) pid--;
  return pid;
}
