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
}

/**
 * The real path of an output a rename replaces; undefined for stdout, a device or a pipe. Its
 * directory is resolved too: `-o link-to-dir/report.csv` is the same file as `-o report.csv`.
 */
async function replacedFile(target: string): Promise<string | undefined> {
  const checked = await checkOutputTarget(target);
  if (checked.mode !== 'atomic') return undefined;
  const dir = await realpath(dirname(checked.path)).catch(() => dirname(checked.path));
  return join(dir, basename(checked.path));
}

/**
 * One live run per output file: before a run sends anything, another run going on now (its
 * run lock held) that writes the same file, from another input or with other options (two
 * cron jobs writing one report), stops this one (RUN_IN_PROGRESS, exit 2, naming its pid and
 * input): whichever ended last would replace the other's output (an older input's answers
 * over a newer's, with exit 0), and rows the two share would be paid for by both. Runs say
 * what they write in a note beside their journal (noteOutput); a run of this same key is left
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
  for (const name of await readdir(o.runsDir).catch(() => [] as string[])) {
    if (name === o.key) continue;
    const note = await readNote(join(o.runsDir, name, NOTE));
    if (note?.output !== output) continue;
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

/** Says, beside the run's journal (`dir`), which output file it writes (see refuseOutputInUse). */
export async function noteOutput(dir: string, target: string, input: string): Promise<void> {
  const output = await replacedFile(target).catch(() => undefined);
  if (output === undefined) return;
  const note: OutputNote = { output, input };
  // Best effort: a note not written only leaves this run's output unguarded.
  await writeFile(join(dir, NOTE), JSON.stringify(note), { mode: 0o600 }).catch(() => undefined);
}

async function readNote(path: string): Promise<OutputNote | undefined> {
  try {
    const note = JSON.parse(await readFile(path, 'utf8')) as Partial<OutputNote>;
    return typeof note.output === 'string' && typeof note.input === 'string'
      ? { output: note.output, input: note.input }
      : undefined;
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
