import { readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { checkOutputTarget } from '../../io/output-target.js';
import { acquireRunLock, lockHolder } from './run-lock.js';

/** Beside a run's journal: the output file it writes (real path) and its input, as named. */
const NOTE = 'output.json';

interface OutputNote {
  output: string;
  input: string;
  /** When the run claimed the output (claimOutput): of two live claims, the earlier one runs. */
  at?: number;
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

/**
 * One live run per output file: before a run sends anything, another run going on now (its
 * run lock held) that writes the same file, from another input or with other options (two
 * cron jobs writing one report), stops this one (RUN_IN_PROGRESS, exit 2, naming its pid and
 * input): whichever ended last would replace the other's output (an older input's answers
 * over a newer's, with exit 0), and rows the two share would be paid for by both. Runs say
 * what they write in a note beside their journal (claimOutput); a run of this same key is left
 * to its own run lock. Reads one small note per run directory.
 */
export async function refuseOutputInUse(o: {
  runsDir: string;
  key: string;
  target: string;
  command: string;
  /** How the caller names the output option (`-o`, `output`). */
  as: string;
}): Promise<void> {
  const output = await replacedFile(o.target);
  if (output === undefined) return;
  await refuseLiveNotes(o, output, () => true);
}

/**
 * Says, beside the run's journal (its run lock held), which output file it writes, then
 * looks again: refuseOutputInUse ran before this run's note was written, so two runs started
 * at the same moment (two cron lines of one minute) both passed it. Of two live runs that both
 * noted one output, the one that noted it first goes on (ties: the smaller run key); the other
 * stops here, before it sends anything (RUN_IN_PROGRESS), as refuseOutputInUse would.
 */
export async function claimOutput(o: {
  runsDir: string;
  key: string;
  target: string;
  input: string;
  command: string;
  as: string;
  now: () => number;
}): Promise<void> {
  const output = await replacedFile(o.target).catch(() => undefined);
  if (output === undefined) return;
  const at = o.now();
  const note: OutputNote = { output, input: o.input, at };
  try {
    await writeFile(join(o.runsDir, o.key, NOTE), JSON.stringify(note), { mode: 0o600 });
  } catch {
    return; // best effort: a note not written only leaves this run's output unguarded
  }
  await refuseLiveNotes(o, output, (other, name) => {
    const when = other.at ?? -Infinity; // a note of an earlier build: that run started first
    return when < at || (when === at && name < o.key);
  });
}

/** Throws when a live run other than `o.key` noted `output` and `first` says it goes first. */
async function refuseLiveNotes(
  o: { runsDir: string; key: string; target: string; command: string; as: string },
  output: string,
  first: (note: OutputNote, name: string) => boolean,
): Promise<void> {
  for (const name of await readdir(o.runsDir).catch(() => [] as string[])) {
    if (name === o.key) continue;
    const note = await readNote(join(o.runsDir, name, NOTE));
    if (note?.output !== output || !first(note, name)) continue;
    try {
      const unlock = await acquireRunLock(join(o.runsDir, name), o.command);
      await unlock();
    } catch (err) {
      if (err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS')
        throw writtenByAnother(o, err, note.input);
      // A run directory removed meanwhile, or not ours to write: nothing of it goes on here.
    }
  }
}

async function readNote(path: string): Promise<OutputNote | undefined> {
  try {
    const note = JSON.parse(await readFile(path, 'utf8')) as Partial<OutputNote>;
    if (typeof note.output !== 'string' || typeof note.input !== 'string') return undefined;
    return {
      output: note.output,
      input: note.input,
      ...(typeof note.at === 'number' ? { at: note.at } : {}),
    };
  } catch {
    return undefined; // no note: a run of an earlier build, or to stdout
  }
}

function writtenByAnother(
  o: { target: string; command: string; as: string },
  err: EnrichError,
  input: string,
): EnrichError {
  const { who, details } = lockHolder(err);
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `${who} is writing ${o.target} from ${input === '-' ? 'stdin' : input}: nothing was sent, as whichever run ended last would replace the other's output`,
    {
      cause: err,
      ...(details ? { details } : {}),
      hint: `Wait for it to finish and run again (${o.command}), or give this run an output of its own (${o.as} another file).`,
    },
  );
}
