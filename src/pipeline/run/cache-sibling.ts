import { EnrichError } from '../../errors.js';
import type { InputIdentity } from '../../io/read.js';
import {
  optionsWithout,
  peekRun,
  runsMatching,
  sameInput,
  type RunState,
} from '../journal/journal.js';
import type { BulkKind, RunWords } from '../types.js';
import { notDownloaded } from './earlier-runs.js';

/** What looking for the same run under another cache setting needs. */
export interface CacheSiblingContext {
  runsDir: string;
  /** This run's key: never its own sibling. */
  key: string;
  kind: BulkKind;
  input: InputIdentity;
  /** This run's options, with its service and account (`cache`: refresh, off or absent). */
  options: Record<string, unknown>;
  restart: boolean;
  /** Whether this run's own journal, when there is one, is resumed rather than started over. */
  resumes: (own: RunState) => boolean;
  now: () => number;
  words: RunWords;
}

/**
 * `--refresh` and `--no-cache` are part of a run's identity: the same file and options with
 * another cache setting is another run, which this one neither resumes nor settles. So a run
 * killed (or `--no-wait`) with jobs paid for and not downloaded, then the same command with
 * `--refresh`, paid for those rows again, and the paid jobs' answers were never seen. Such a
 * run stops this one before it sends anything (exit 2), naming the command that downloads
 * them; `restart` (pay for those rows again) goes on, and so does a run of this key that is
 * resumed (two unfinished runs would otherwise stop each other; a finished one sends nothing).
 * Only this account's runs of this very content are looked at (one header read per run
 * directory; a journal read per match, and this run's own only when a match left jobs).
 */
export async function refuseUnsettledSibling(c: CacheSiblingContext): Promise<void> {
  if (c.restart || c.input.path === '-') return;
  const setting = (o: Record<string, unknown>) => (typeof o.cache === 'string' ? o.cache : '');
  const options = optionsWithout(c.options, 'cache');
  const siblings = await runsMatching(
    c.runsDir,
    c.key,
    (h) =>
      h.kind === c.kind &&
      sameInput(h.input, c.input) &&
      setting(h.options) !== setting(c.options) &&
      optionsWithout(h.options, 'cache') === options,
  );
  for (const header of siblings) {
    const state = await peekRun(c.runsDir, header.run);
    const now = c.now();
    const open = state ? [...state.batches.values()].filter((b) => notDownloaded(b, now)) : [];
    if (open.length === 0) continue;
    // A run of this key that is resumed (unfinished, or finished and not renewed) goes on as it
    // is. Its journal is read only here: most runs have no such sibling, and it is read again
    // when opened.
    const own = await peekRun(c.runsDir, c.key);
    if (own && c.resumes(own)) return;
    const how = setting(header.options);
    const flag = how === 'refresh' ? 'refresh' : how === 'off' ? 'cache' : undefined;
    const other = flag ? `with ${c.words.option(flag)}` : 'with the cache as usual';
    throw new EnrichError(
      'USAGE',
      `an unfinished run of ${c.input.path} ${other} left ${open.length} job(s) paid for and not downloaded: nothing was sent, as this run would pay for their rows again`,
      {
        hint: `Finish that run first, whose answers are new: ${header.command} (it downloads them and sends only the rows it has not sent); or ${c.words.restart} to pay for those rows again.`,
        details: { jobs: open.length },
      },
    );
  }
}
