import { createHash } from 'node:crypto';
import { readFile, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { checkOutputTarget } from '../../io/output-target.js';
import { acquireLockDir, lockHolder, runLockInUse } from './run-lock.js';

/** In an output's lock directory: who holds it (pid), its run's key and the input it writes from. */
const HOLDER = 'holder.json';

interface HolderNote {
  pid: number;
  key: string;
  input: string;
}

/** What the output checks are told: the runs directory, the output, and how to name things. */
interface OutputCheck {
  runsDir: string;
  target: string;
  command: string;
  /** How the caller names the output option (`-o`, `output`). */
  as: string;
}

/**
 * The real path of an output a rename replaces; undefined for stdout, a device or a pipe. Its
 * directory is resolved too: `-o link-to-dir/report.csv` is the same file as `-o report.csv`.
 */
async function replacedFile(target: string): Promise<string | undefined> {
  const checked = await checkOutputTarget(target);
  if (checked.mode !== 'atomic') return undefined;
  // Stryker disable next-line ArrowFunction: reached only when the directory checkOutputTarget just found is removed meanwhile
  const dir = await realpath(dirname(checked.path)).catch(() => dirname(checked.path));
  return join(dir, basename(checked.path));
}

/** The lock directory of one output file: `<runs>/.outputs/<hash of its real path>`. */
export function outputLockDir(runsDir: string, output: string): string {
  const id = createHash('sha256').update(output).digest('hex').slice(0, 32);
  return join(runsDir, '.outputs', id);
}

/**
 * One live run per output file, checked before a run sends anything (or asks the service
 * anything): another run going on now that writes the same file, from another input or with
 * other options (two cron jobs writing one report), stops this one (RUN_IN_PROGRESS, exit 2,
 * naming its pid and input): whichever ended last would replace the other's output (an older
 * input's answers over a newer's, with exit 0), and rows the two share would be paid for by
 * both. Only looks: claimOutput takes the file's lock.
 */
export async function refuseOutputInUse(o: OutputCheck & { key: string }): Promise<void> {
  const output = await replacedFile(o.target);
  if (output === undefined) return;
  const dir = outputLockDir(o.runsDir, output);
  const held = await runLockInUse(dir, o.command);
  if (!held) return;
  const holder = await holderOf(dir, held);
  // A run of this same key is left to its own run lock (its message: the same job).
  if (holder?.key === o.key) return;
  throw writtenByAnother(o, held, holder?.input);
}

/**
 * Takes the output file's lock for the rest of the run (its journal open, its run lock held):
 * of runs started at the same moment (two cron lines of one minute), which all passed
 * refuseOutputInUse, exactly one takes it; the others stop here, before they send anything
 * (RUN_IN_PROGRESS). A lock is a mutual exclusion no clock can tie (an order of notes by time
 * could: two in one millisecond). Resolves to its release. A lock that cannot be made (a runs
 * directory not ours to write) leaves the output unguarded, as a run of an earlier build did.
 */
export async function claimOutput(
  o: OutputCheck & { key: string; input: string },
): Promise<() => Promise<void>> {
  const unguarded = async () => undefined;
  const output = await replacedFile(o.target).catch(() => undefined);
  if (output === undefined) return unguarded;
  const dir = outputLockDir(o.runsDir, output);
  const release = await takeLock(dir, o);
  if (!release) return unguarded;
  const holder = join(dir, HOLDER);
  const note: HolderNote = { pid: process.pid, key: o.key, input: o.input };
  // Best effort: without it, a run refused names the holder by its pid alone.
  await writeFile(holder, JSON.stringify(note), { mode: 0o600 }).catch(() => undefined);
  return async () => {
    await rm(holder, { force: true });
    await release();
    await rmdir(dirname(dir)).catch(() => undefined); // `.outputs` too, once empty
  };
}

/** Takes the lock of `dir`; undefined when it cannot be made (a runs directory not ours to write). */
async function takeLock(dir: string, o: OutputCheck): Promise<(() => Promise<void>) | undefined> {
  try {
    return await acquireLockDir(dir, o.command);
  } catch (err) {
    if (err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS')
      throw writtenByAnother(o, err, (await holderOf(dir, err))?.input);
    return undefined;
  }
}

/**
 * The holder of an output's lock as its note says; undefined when the note is not there yet, is
 * damaged, or is a note of an earlier holder (another pid than the lock's).
 */
async function holderOf(dir: string, held: EnrichError): Promise<HolderNote | undefined> {
  let note: Partial<HolderNote>;
  try {
    note = JSON.parse(await readFile(join(dir, HOLDER), 'utf8')) as Partial<HolderNote>;
  } catch {
    return undefined;
  }
  const named = held.details?.pid;
  const pid = typeof named === 'number' ? named : process.pid;
  return note.pid === pid && typeof note.input === 'string' && typeof note.key === 'string'
    ? { pid, key: note.key, input: note.input }
    : undefined;
}

function writtenByAnother(
  o: OutputCheck,
  err: EnrichError,
  input: string | undefined,
): EnrichError {
  const { who, details } = lockHolder(err);
  const from = input === undefined ? '' : ` from ${input === '-' ? 'stdin' : input}`;
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `${who} is writing ${o.target}${from}: nothing was sent, as whichever run ended last would replace the other's output`,
    {
      cause: err,
      ...(details ? { details } : {}),
      hint: `Wait for it to finish and run again (${o.command}), or give this run an output of its own (${o.as} another file).`,
    },
  );
}
