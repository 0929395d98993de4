/** Deepest nesting of JSON text worth refusing: JSON.stringify of a cell overflows the stack near 10,000. */
export const MAX_JSON_DEPTH = 1000;

/**
 * The deepest `{`/`[` nesting of JSON text (brackets inside strings ignored). Texts
 * shorter than twice the limit cannot exceed it, so ordinary rows skip the scan.
 */
export function jsonNestingDepth(text: string, limit = MAX_JSON_DEPTH): number {
  if (text.length <= 2 * limit) return 0;
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Colons in `text` (native indexOf): every key of a JSON object text brings one, strings may bring more. */
function colonCount(text: string): number {
  let n = 0;
  for (let at = text.indexOf(':'); at >= 0; at = text.indexOf(':', at + 1)) n++;
  return n;
}

/**
 * A key an object's JSON text gives twice at its top level (JSON.parse keeps the last value
 * and drops the first without a word), or undefined. `keys` is how many keys the parse kept:
 * when the text has no more colons than that, no key can repeat and nothing is scanned.
 */
export function duplicateTopLevelKey(text: string, keys: number): string | undefined {
  if (colonCount(text) <= keys) return undefined;
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) i++;
      }
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        expectKey = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      expectKey = depth === 1 && c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && depth === 1) expectKey = true;
  }
  return undefined;
}
