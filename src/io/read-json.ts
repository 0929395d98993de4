import type { Readable } from 'node:stream';
import { EnrichError } from '../errors.js';
import { JsonArrayScanner, JsonScanError } from './json-array-scanner.js';
import { duplicateTopLevelKey, jsonNestingDepth, MAX_JSON_DEPTH } from './json-depth.js';
import { JsonNumber, parseExact, stringifyExact } from './json-exact.js';
import { MAX_RECORD_CHARS, nulError } from './limits.js';
import { openTextStream } from './text-stream.js';

/** One JSON object of the input and the line it starts on. */
export interface JsonRecord {
  value: Record<string, unknown>;
  line: number;
}

export interface JsonReadOptions {
  name: string;
  encoding: string;
  bomLength: number;
  /** Longest record (array element or line) accepted, in characters: 8 MiB, as a CSV row. */
  maxRecordChars?: number;
}

const invalid = (file: string, line: number, message: string, cause?: unknown) =>
  new EnrichError('INPUT_INVALID', message, { location: { file, line }, cause });

function parseObject(
  text: string,
  file: string,
  line: number,
  what: string,
): Record<string, unknown> {
  // Deep nesting parses, but turning it back into a cell overflows the stack.
  const depth = jsonNestingDepth(text);
  if (depth > MAX_JSON_DEPTH)
    throw invalid(
      file,
      line,
      `${what}: expected at most ${MAX_JSON_DEPTH} levels of nesting, got ${depth}`,
    );
  let value: unknown;
  try {
    value = parseExact(text);
  } catch (err) {
    throw invalid(file, line, `${what} is not valid JSON: ${(err as Error).message}`, err);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(
      file,
      line,
      `${what}: expected a JSON object ({...}), got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`,
    );
  }
  const twice = duplicateTopLevelKey(text, Object.keys(value).length);
  if (twice !== undefined)
    throw invalid(
      file,
      line,
      `${what} has the key ${JSON.stringify(twice)} twice: expected each key once (one of its values would be lost)`,
    );
  return value as Record<string, unknown>;
}

/** Streams the objects of a JSON array file; anything else is INPUT_INVALID with its line. */
export async function* readJsonArray(
  filePath: string,
  options: JsonReadOptions,
): AsyncGenerator<JsonRecord> {
  const scanner = new JsonArrayScanner(options.maxRecordChars ?? MAX_RECORD_CHARS);
  const text = openTextStream(filePath, {
    encoding: options.encoding,
    skipBytes: options.bomLength,
  });
  let index = 0;
  try {
    for await (const chunk of text as AsyncIterable<string>) {
      if (chunk.includes('\0')) throw nulError(options.name, scanner.lineNow());
      for (const el of scanner.push(chunk)) {
        index++;
        yield {
          value: parseObject(el.text, options.name, el.line, `element ${index} of the array`),
          line: el.line,
        };
      }
    }
    scanner.finish();
  } catch (err) {
    if (err instanceof JsonScanError) {
      // An object where the array should open: most often JSON Lines under a .json name.
      const lines = /^expected a JSON array of objects .*, got "\{"$/.test(err.message);
      throw new EnrichError('INPUT_INVALID', err.message, {
        location: { file: options.name, line: err.line },
        cause: err,
        ...(lines
          ? {
              hint: 'If it holds one object per line (JSON Lines), name it .jsonl or pass --input-format jsonl.',
            }
          : {}),
      });
    }
    throw wrapRead(err, options.name);
  } finally {
    text.destroy();
  }
}

/** Streams the objects of a JSON Lines file (blank lines skipped); a bad line is INPUT_INVALID. */
export async function* readJsonLines(
  filePath: string,
  options: JsonReadOptions,
): AsyncGenerator<JsonRecord> {
  const text = openTextStream(filePath, {
    encoding: options.encoding,
    skipBytes: options.bomLength,
  });
  try {
    for await (const { raw, line } of splitLines(text, options)) {
      if (raw.trim() === '') continue;
      yield { value: parseObject(raw, options.name, line, `line ${line}`), line };
    }
  } catch (err) {
    throw wrapRead(err, options.name);
  } finally {
    text.destroy();
  }
}

/**
 * Lines of a text stream (LF or CRLF), each at most `maxRecordChars` long: a longer one is
 * refused while it is read, never buffered whole (a 200 MB line would take gigabytes).
 */
async function* splitLines(
  text: Readable,
  options: JsonReadOptions,
): AsyncGenerator<{ raw: string; line: number }> {
  const max = options.maxRecordChars ?? MAX_RECORD_CHARS;
  let parts: string[] = [];
  let size = 0;
  let line = 1;
  const tooLong = () =>
    invalid(
      options.name,
      line,
      `line ${line} is longer than ${max} characters: expected at most that many a record`,
    );
  for await (const chunk of text as AsyncIterable<string>) {
    if (chunk.includes('\0')) throw nulError(options.name, line);
    let from = 0;
    for (let at = chunk.indexOf('\n'); at >= 0; at = chunk.indexOf('\n', from)) {
      if (size + at - from > max) throw tooLong();
      parts.push(chunk.slice(from, at));
      const joined = parts.join('');
      yield { raw: joined.endsWith('\r') ? joined.slice(0, -1) : joined, line: line++ };
      parts = [];
      size = 0;
      from = at + 1;
    }
    size += chunk.length - from;
    if (size > max) throw tooLong();
    parts.push(chunk.slice(from));
  }
  const last = parts.join('');
  if (last !== '') yield { raw: last, line };
}

function wrapRead(err: unknown, file: string): unknown {
  if (err instanceof EnrichError) return err;
  return new EnrichError('INPUT_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, {
    cause: err,
    location: { file },
  });
}

/** Turns a JSON value into a cell: strings as they are, null as empty, numbers as written, objects and arrays as JSON text. */
export function jsonCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof JsonNumber) return value.text;
  if (typeof value === 'object') return stringifyExact(value);
  return String(value);
}

/**
 * The value `record` itself holds under `key`: undefined when it has no such key, also for a key
 * named like a member every object inherits (`constructor`, `toString`, `__proto__`), which
 * `record[key]` would read as that member and write as a cell (`function Object() {…}`).
 */
export function ownValue(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Per key, whether `record`'s value is an object or array; undefined when none is (the usual row). */
export function nestedCells(
  keys: readonly string[],
  record: Record<string, unknown>,
): boolean[] | undefined {
  const nested = keys.map((k) => {
    const v = ownValue(record, k);
    return typeof v === 'object' && v !== null && !(v instanceof JsonNumber);
  });
  return nested.includes(true) ? nested : undefined;
}
