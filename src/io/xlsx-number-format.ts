/**
 * Numbers as a spreadsheet shows them: in digits (never in exponent form), in percent
 * formats, and in zero-padding formats (`00000`, Excel's "Zip Code").
 */

/**
 * A number as a spreadsheet shows it, never in exponent form: Excel keeps 15 significant
 * digits (0.1+0.2 shows 0.3) and an id or a phone such as 12025550123 shows whole, not
 * as 1.2E+10. A percent format shows 0.25 as 25%.
 */
export function numberText(n: number, numFmt?: string): string {
  if (!Number.isFinite(n)) return String(n);
  const shown = Number(n.toPrecision(15));
  if (numFmt && /%/.test(numFmt.replace(/"[^"]*"/g, ''))) {
    const decimals = /\.(0+)%/.exec(numFmt)?.[1]?.length ?? 0;
    return `${(shown * 100).toFixed(decimals)}%`;
  }
  return plainDigits(shown);
}

/** String(n), with the exponent form (1e+21, 1e-7) spelt out in digits. */
function plainDigits(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  if (Math.abs(n) >= 1) return BigInt(Math.round(n)).toString();
  return n.toFixed(20).replace(/0+$/, '');
}

/**
 * A zero-padding format: the integer part's runs of `0` placeholders (their lengths) and literal
 * text, the number of `0` placeholders after a decimal point, and literal text after those.
 */
interface Padding {
  int: (number | string)[];
  decimals: number;
  after: string;
}
const paddings = new Map<string, Padding | null>();

/**
 * A number format made only of `0` placeholders, literal text and at most one decimal point
 * followed by `0`s (`00000`, Excel's "Zip Code"; `00000-0000`, `000-00-0000`, `"ID-"000000`,
 * `000.00`), that pads (two zeros or more before the point) or adds text; null for any other
 * format: `0` and `0.00` add nothing but rounding (the number reads as its digits), and `#`,
 * `?`, thousands, colours, percent and dates are not read this way (sections: zeroPadded).
 */
function paddingOf(numFmt: string): Padding | null {
  const int: Padding['int'] = [];
  let decimals = -1; // -1: no decimal point
  let after = '';
  const literal = (text: string) => {
    if (decimals >= 0) after += text;
    else if (typeof int[int.length - 1] === 'string') int[int.length - 1] += text;
    else int.push(text);
  };
  for (let i = 0; i < numFmt.length; i++) {
    const ch = numFmt[i]!;
    if (ch === '0') {
      const last = int.length - 1;
      if (decimals >= 0) {
        if (after !== '') return null; // a placeholder after text in the fraction
        decimals++;
      } else if (typeof int[last] === 'number') int[last] += 1;
      else int.push(1);
    } else if (ch === '.') {
      if (decimals >= 0 || !int.some((p) => typeof p === 'number')) return null;
      decimals = 0;
    } else if (ch === '"') {
      const end = numFmt.indexOf('"', i + 1);
      if (end === -1) return null;
      literal(numFmt.slice(i + 1, end));
      i = end;
    } else if (ch === '\\' && i + 1 < numFmt.length) literal(numFmt[++i]!);
    else if (' -()+$'.includes(ch)) literal(ch);
    else return null;
  }
  const zeros = int.reduce<number>((w, p) => (typeof p === 'number' ? w + p : w), 0);
  const text = after !== '' || int.some((p) => typeof p === 'string');
  return zeros >= 2 || (zeros > 0 && text) ? { int, decimals: Math.max(0, decimals), after } : null;
}

/**
 * The digits of |n| as Excel shows them (15 significant digits) rounded to `decimals` places,
 * half away from zero as Excel does (on the decimal digits, so 2.675 is 2.68): whole and fraction.
 */
function roundedDigits(n: number, decimals: number): [string, string] {
  const [int = '0', frac = ''] = plainDigits(Number(Math.abs(n).toPrecision(15))).split('.');
  if (frac.length <= decimals) return [int, frac.padEnd(decimals, '0')];
  let digits = int + frac.slice(0, decimals);
  if (frac[decimals]! >= '5')
    digits = (BigInt(digits) + 1n).toString().padStart(digits.length, '0');
  const cut = digits.length - decimals;
  return [digits.slice(0, cut), digits.slice(cut)];
}

/**
 * A number as a zero-padding format shows it (`00000`: 2134 as `02134`, 2134.6 as `02135`;
 * `00000-0000`: 21341234 as `02134-1234`; `000.00`: 5.5 as `005.50`), when that differs from its
 * digits; undefined otherwise (another format, or nothing added: `00000` shows 12345 as
 * `12345`). Digits beyond the placeholders go to the first run, as Excel puts them.
 */
export function zeroPadded(n: number, numFmt: string): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  // Sections (`00000;(00000)`, `00000;-00000;"none"`): positive; negative, shown without its
  // sign; zero; the first serves a sign whose own section is missing, as in Excel.
  const [positive = '', negative, zero] = formatSections(numFmt);
  let section = positive;
  if (n < 0 && negative !== undefined) section = negative;
  else if (n === 0 && zero !== undefined) section = zero;
  const own = section !== positive;
  const shown = paddedBy(own && n < 0 ? -n : n, section);
  if (shown === undefined && own) return literalOnly(section);
  return shown === undefined || shown === plainDigits(n) ? undefined : shown;
}

/** The format's sections, split at each `;` outside quotes and escapes. */
function formatSections(numFmt: string): string[] {
  const sections = [''];
  for (let i = 0; i < numFmt.length; i++) {
    const ch = numFmt[i]!;
    if (ch === ';') {
      sections.push('');
      continue;
    }
    let piece = ch;
    if (ch === '"') {
      const end = numFmt.indexOf('"', i + 1);
      piece = end === -1 ? numFmt.slice(i) : numFmt.slice(i, end + 1);
    } else if (ch === '\\') piece = numFmt.slice(i, i + 2);
    sections[sections.length - 1] += piece;
    i += piece.length - 1;
  }
  return sections;
}

/** A section of quoted text only (`"none"`), as Excel shows it; undefined for any other. */
function literalOnly(section: string): string | undefined {
  const m = /^"([^"]*)"$/.exec(section);
  return m?.[1];
}

/** `n` as one zero-padding section shows it; undefined when the section is no such format. */
function paddedBy(n: number, numFmt: string): string | undefined {
  let padding = paddings.get(numFmt);
  if (padding === undefined) {
    padding = paddingOf(numFmt);
    paddings.set(numFmt, padding);
  }
  if (!padding) return undefined;
  const { int, decimals, after } = padding;
  const [whole, fraction] = roundedDigits(n, decimals);
  const width = int.reduce<number>((w, p) => (typeof p === 'number' ? w + p : w), 0);
  let rest = whole.padStart(width, '0');
  const first = int.findIndex((p) => typeof p === 'number');
  let shown = '';
  for (let i = int.length - 1; i >= 0; i--) {
    const p = int[i]!;
    if (typeof p === 'string') shown = p + shown;
    else if (i === first) {
      shown = rest + shown;
      rest = '';
    } else {
      shown = rest.slice(-p) + shown;
      rest = rest.slice(0, -p);
    }
  }
  if (decimals > 0) shown += `.${fraction}`;
  shown += after;
  return n < 0 ? `-${shown}` : shown;
}

/**
 * True when a zero-padded number's text is a plain number (`2134.60`, `12346`: no zero before
 * its first digit, no text): written back as the number, which keeps its value; a text with
 * leading zeros or words (`02134`, `ID-0007`) is written back as that text.
 */
export function isPlainNumber(text: string): boolean {
  return /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/.test(text);
}
