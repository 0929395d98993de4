import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnrichError } from '../errors.js';
import type { StoreData } from './store.js';

const FILE = 'sandbox-state.json';

/** Reads the persisted state from `dir`, or undefined when there is none yet. */
export function loadState(dir: string): StoreData | undefined {
  const file = join(dir, FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new EnrichError(
      'INPUT_UNREADABLE',
      `sandbox state: cannot read ${file}: ${(err as Error).message}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new EnrichError('INPUT_INVALID', `sandbox state: ${file} is not valid JSON`);
  }
  const d = data as Partial<StoreData> | null;
  if (!d || d.version !== 1 || typeof d.admin_token !== 'string' || !Array.isArray(d.accounts)) {
    throw new EnrichError(
      'INPUT_INVALID',
      `sandbox state: ${file} is not a sandbox state file (version 1)`,
    );
  }
  return { clock_offset: 0, keys: [], jobs: [], ...d } as StoreData;
}

/** Writes the state atomically (temp file + rename), readable only by its owner. */
export function saveState(dir: string, data: StoreData): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
  renameSync(tmp, file);
}
