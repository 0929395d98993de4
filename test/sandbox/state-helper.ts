import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATE_FILE } from '../../src/sandbox/persist.js';
import { parseLine } from '../../src/sandbox/state-lines.js';
import { Store, type Account, type Job, type KeyRecord } from '../../src/sandbox/store.js';

/** The --state log of a sandbox directory. */
export function stateFile(dir: string): string {
  return join(dir, STATE_FILE);
}

/** What a --state directory holds, replayed from its log (the shape of the old whole-state file). */
export function readState(dir: string): {
  version: 1;
  admin_token: string;
  clock_offset: number;
  accounts: Account[];
  keys: KeyRecord[];
  jobs: Job[];
} {
  const lines = readFileSync(stateFile(dir), 'utf8').split('\n').filter(Boolean);
  const header = parseLine(lines[0] as string) as { admin_token: string };
  const store = new Store(header.admin_token);
  for (const line of lines.slice(1)) store.apply(parseLine(line) as never);
  return {
    version: 1,
    admin_token: store.adminToken,
    clock_offset: store.clockOffset,
    accounts: [...store.accounts.values()],
    keys: [...store.keys.values()],
    jobs: [...store.jobs.values()],
  };
}
