/**
 * Where --state keeps the sandbox: `sandbox-state.jsonl`, a log of changes (state-log.ts).
 * A `sandbox-state.json` of earlier versions (the whole state as one JSON document) is read
 * once, rewritten as a log, and kept beside it as `sandbox-state.json.migrated`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { EnrichError } from '../errors.js';
import { newAdminToken } from './keys.js';
import { parseLine, type StateHeader } from './state-lines.js';
import { readLines } from './state-file.js';
import { StateLog, syncDir, writeSnapshotSync, type CompactionPolicy } from './state-log.js';
import { Store, type Account, type Job, type KeyRecord, type StateEvent } from './store.js';

/** The log of changes in a --state directory. */
export const STATE_FILE = 'sandbox-state.jsonl';
/** The whole-state file of earlier versions. */
export const LEGACY_STATE_FILE = 'sandbox-state.json';

/** The state of a --state directory, open: the store replayed and the log it appends to. */
export interface OpenState {
  store: Store;
  log: StateLog;
  /** False when the directory held no state yet. */
  restored: boolean;
  /** Bytes of a torn last line cut off the log (a change that was never answered). */
  tornBytes: number;
}

/** Opens (or creates) the state in `dir`: replays its log, or migrates a whole-state file. */
export async function openState(dir: string, policy: CompactionPolicy): Promise<OpenState> {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw unreadable(dir, err);
  }
  const file = join(dir, STATE_FILE);
  const legacy = join(dir, LEGACY_STATE_FILE);
  let store: Store;
  let restored = true;
  let tornBytes = 0;
  if (existsSync(file)) {
    ({ store, tornBytes } = await replay(file));
  } else if (existsSync(legacy)) {
    store = loadLegacy(legacy);
    writeSnapshotSync(file, store);
    renameSync(legacy, `${legacy}.migrated`);
    syncDir(dir);
  } else {
    store = new Store(newAdminToken());
    restored = false;
    writeSnapshotSync(file, store);
  }
  return { store, log: new StateLog(file, store, policy), restored, tornBytes };
}

async function replay(file: string): Promise<{ store: Store; tornBytes: number }> {
  let store: Store | undefined;
  let end;
  try {
    end = await readLines(file, (line) => {
      const event = parseLine(line.text);
      if (!store) {
        if (event.t !== 'meta' || (event as StateHeader).version !== 2)
          throw new Error('the first line is not the header of a sandbox state log (version 2)');
        store = new Store((event as StateHeader).admin_token);
      } else if (event.t === 'meta') throw new Error('a second header');
      else store.apply(event as StateEvent);
    });
  } catch (err) {
    throw new EnrichError('INPUT_INVALID', `sandbox state: ${(err as Error).message}`, {
      hint: `the log of --state is damaged before its last line; move ${file} away to start afresh`,
    });
  }
  if (!store)
    throw new EnrichError('INPUT_INVALID', `sandbox state: ${file} is not a sandbox state log`);
  // A torn last line is a change that was never answered: cut it off.
  if (end.tornBytes > 0) truncateSync(file, end.goodBytes);
  return { store, tornBytes: end.tornBytes };
}

/** What `sandbox-state.json` of earlier versions held. */
interface LegacyData {
  version: 1;
  admin_token: string;
  clock_offset?: number;
  accounts: Account[];
  keys?: KeyRecord[];
  jobs?: Job[];
}

function loadLegacy(file: string): Store {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw unreadable(file, err);
  }
  let d: Partial<LegacyData> | null;
  try {
    d = JSON.parse(text) as Partial<LegacyData> | null;
  } catch {
    throw new EnrichError('INPUT_INVALID', `sandbox state: ${file} is not valid JSON`);
  }
  if (!d || d.version !== 1 || typeof d.admin_token !== 'string' || !Array.isArray(d.accounts)) {
    throw new EnrichError(
      'INPUT_INVALID',
      `sandbox state: ${file} is not a sandbox state file (version 1)`,
    );
  }
  const s = new Store(d.admin_token);
  s.apply({ t: 'clock', offset: d.clock_offset as number });
  for (const account of d.accounts) s.apply({ t: 'account', account });
  for (const key of d.keys ?? []) s.apply({ t: 'key', key });
  for (const j of d.jobs ?? []) {
    // Before results were kept as text, jobs held the record objects; before the submission
    // answer was built per reply, they held it (with a download_url of that run's address).
    const old = j as Job & { records?: unknown; response?: unknown };
    if (typeof old.results !== 'string')
      old.results = JSON.stringify(Array.isArray(old.records) ? old.records : []);
    delete old.records;
    delete old.response;
    s.apply({ t: 'job', job: old });
  }
  return s;
}

function unreadable(path: string, err: unknown): EnrichError {
  return new EnrichError(
    'INPUT_UNREADABLE',
    `sandbox state: cannot read ${path}: ${(err as Error).message}`,
  );
}
