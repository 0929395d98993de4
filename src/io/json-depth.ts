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
