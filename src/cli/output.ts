/** stdout carries data only; everything else goes to stderr (DESIGN.md section 4). */

let closedStdoutOwners = 0;

/**
 * Runs `run`, a run writing its data to stdout that stops by itself when the reader goes
 * away: its next write fails with OUTPUT_CLOSED, and it ends the requests in flight (their
 * answers journaled) before it returns. Meanwhile main.ts leaves a closed stdout to it rather
 * than ending the process at once (which would lose those answers).
 */
export async function stopsOnClosedStdout<T>(run: () => Promise<T>): Promise<T> {
  closedStdoutOwners++;
  try {
    return await run();
  } finally {
    closedStdoutOwners--;
  }
}

/** What a run writing its data to stdout says when the reader went away before the end (exit 2). */
export const OUTPUT_CLOSED_LINE = 'enrich: the output was closed before everything was written\n';

let closedStdoutNote: (() => string) | undefined;

/**
 * What a run writing its data to stdout adds to OUTPUT_CLOSED_LINE when the reader goes away
 * (what it had sent, and how to get it without paying again); undefined clears it.
 */
export function noteOnClosedStdout(note: (() => string) | undefined): void {
  closedStdoutNote = note;
}

/** OUTPUT_CLOSED_LINE and the note of the run writing to stdout, if any. */
export function closedStdoutText(): string {
  return OUTPUT_CLOSED_LINE + (closedStdoutNote?.() ?? '');
}

/** True while a run that stops by itself on a closed stdout runs (stopsOnClosedStdout). */
export const closedStdoutIsHandled = (): boolean => closedStdoutOwners > 0;

/** Writes one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes aligned `key  value` lines on stdout; nested objects are flattened with `.`. */
export function printKeyValues(value: Record<string, unknown>): void {
  process.stdout.write(keyValueLines(value));
}

/**
 * Aligned `key  value` lines, one per key (nested objects flattened with `.`). The values come
 * from the service: a line break in one shows as `\n` (a description over several lines would
 * break the alignment), and other control characters as `?`, so none can drive the terminal
 * (`--json` has the text as it came).
 */
export function keyValueLines(value: Record<string, unknown>): string {
  const rows: [string, string][] = [];
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v))
        walk(v as Record<string, unknown>, key);
      else
        rows.push([
          oneLine(key),
          v === null || v === undefined
            ? ''
            : oneLine(Array.isArray(v) ? JSON.stringify(v) : String(v)),
        ]);
    }
  };
  walk(value, '');
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + (rows.length ? '\n' : '');
}

/** Text on one line of the terminal: line breaks as `\n`, tabs as a space, other controls `?`. */
function oneLine(text: string): string {
  return printable(text.replace(/\r\n|\r|\n/g, '\\n').replace(/\t/g, ' '));
}

/** Writes a line of talk on stderr unless quiet. */
export function say(quiet: boolean, line: string): void {
  if (!quiet) process.stderr.write(`${line}\n`);
}

/** A warning as the CLI writes it on stderr (even with --quiet: it is about the user's data or money). */
export function warningLine(message: string): string {
  return `enrich: warning: ${printable(message)}`;
}

/**
 * Text for the terminal from elsewhere (a service's message, a file's cells or name): control
 * characters other than line breaks and tabs as `?`, so no escape sequence in it can move the
 * cursor, rewrite a line or retitle the window.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?');
}

/** Writes warnings about how an input was read on stderr, even with --quiet. */
export function warnAbout(warnings: readonly string[]): void {
  for (const w of warnings) process.stderr.write(`${warningLine(w)}\n`);
}
