import { randomBytes } from 'node:crypto';

/**
 * A JSON number whose text a JavaScript number would change (`9007199254740993`, `1.10`,
 * `1e400`), kept as written. It appears in `InputRow.value` in place of the number and is
 * written back as its text, so every input value leaves the tool untouched.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
  /** Plain JSON.stringify sees the text as a string; `stringifyExact` writes it as the number it is. */
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
}

// Cheap test first: only a text holding a long digit run, a fraction, an exponent or -0 can hold such a number.
const SUSPECT = /\d{16}|\d[.eE]|-0/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A marker no input string holds (random per process), for numbers swapped out while parsing. */
const MARK = `\u{E000}${randomBytes(8).toString('hex')}:`;

/**
 * JSON.parse that keeps numbers a JavaScript number would change as JsonNumber. Ordinary
 * texts (no such number) take the plain JSON.parse, with no per-character work.
 */
export function parseExact(text: string): unknown {
  if (!SUSPECT.test(text)) return JSON.parse(text);
  const swapped = swapInexactNumbers(text);
  if (swapped === text) return JSON.parse(text);
  return JSON.parse(swapped, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(MARK)
      ? new JsonNumber(value.slice(MARK.length))
      : value,
  );
}

/** Replaces each number outside strings whose text does not survive Number() with a marked string. */
function swapInexactNumbers(text: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0];
      if (!token) continue;
      if (String(Number(token)) !== token) {
        out += `${text.slice(from, i)}"${MARK}${token}"`;
        from = i + token.length;
      }
      i += token.length - 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** JSON.stringify that writes JsonNumber values as the numbers they were (their text, unquoted). */
export function stringifyExact(value: unknown): string {
  if (!holdsJsonNumber(value)) return JSON.stringify(value);
  // The holder's own value: `v` is what toJSON already made of it.
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key];
    return raw instanceof JsonNumber ? `${MARK}${raw.text}` : v;
  }).replace(new RegExp(`"${MARK}([^"]*)"`, 'g'), '$1');
}

function holdsJsonNumber(value: unknown): boolean {
  if (value instanceof JsonNumber) return true;
  if (value === null || typeof value !== 'object') return false;
  for (const v of Object.values(value)) if (holdsJsonNumber(v)) return true;
  return false;
}
