import { EnrichError } from '../errors.js';

/** What the first bytes of a file say about its text encoding. */
export interface DetectedEncoding {
  /** An iconv-lite encoding name: utf-8, utf-16le, utf-16be or windows-1252 (or the forced one). */
  encoding: string;
  bom: boolean;
  /** Bytes to skip at the start of the file (the BOM). */
  bomLength: number;
}

const BOMS: { encoding: string; bytes: number[] }[] = [
  { encoding: 'utf-8', bytes: [0xef, 0xbb, 0xbf] },
  { encoding: 'utf-16le', bytes: [0xff, 0xfe] },
  { encoding: 'utf-16be', bytes: [0xfe, 0xff] },
];

const startsWith = (sample: Uint8Array, bytes: number[]) =>
  sample.length >= bytes.length && bytes.every((b, i) => sample[i] === b);

/** Detects the encoding of a file from its first bytes: BOM, then UTF-16 shape, then UTF-8 validity, else Windows-1252. */
export function detectEncoding(
  sample: Uint8Array,
  truncated: boolean,
  forced?: string,
): DetectedEncoding {
  const bom = BOMS.find((b) => startsWith(sample, b.bytes));
  if (forced) {
    let encoding = canonicalEncoding(forced);
    // Plain "utf-16" says nothing of byte order: the BOM (else the bytes) does, and the BOM is then
    // skipped like any other, instead of reaching the first header cell as U+FEFF.
    if (encoding === 'utf-16')
      encoding = bom?.encoding.startsWith('utf-16')
        ? bom.encoding
        : (utf16WithoutBom(sample) ?? 'utf-16le');
    // A UTF-8 BOM over text forced to a single-byte encoding (UTF-8 with Windows-1252 bytes in
    // it) is skipped too: read as Windows-1252 it would become "ï»¿" in the first header cell.
    const skips =
      bom &&
      (bom.encoding === encoding || (bom.encoding === 'utf-8' && !encoding.startsWith('utf-16')));
    return { encoding, bom: !!skips, bomLength: skips ? bom.bytes.length : 0 };
  }
  if (bom) return { encoding: bom.encoding, bom: true, bomLength: bom.bytes.length };
  const utf16 = utf16WithoutBom(sample);
  if (utf16) return { encoding: utf16, bom: false, bomLength: 0 };
  const encoding = isUtf8(sample, truncated) ? 'utf-8' : 'windows-1252';
  return { encoding, bom: false, bomLength: 0 };
}

// Keyed by the name without case or punctuation, as iconv-lite compares them.
const ALIASES: Record<string, string> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  // iconv-lite's "utf-16" reads a BOM or guesses; detectEncoding settles the byte order itself.
  utf16: 'utf-16',
  // UCS-2 is what Windows calls UTF-16LE (iconv-lite: an alias of it).
  ucs2: 'utf-16le',
  ucs2le: 'utf-16le',
  cp1252: 'windows-1252',
  windows1252: 'windows-1252',
  win1252: 'windows-1252',
};

/** Normalises user spellings (`utf8`, `UTF-16LE`, `utf16`, `ucs2`, `cp1252`, `latin1`) to the names used here. */
export function canonicalEncoding(name: string): string {
  const n = name.trim().toLowerCase().replace(/_/g, '-');
  return ALIASES[n.replace(/[^a-z0-9]/g, '')] ?? n;
}

/** UTF-16 without a BOM shows up as a NUL in every other byte of ASCII text. */
function utf16WithoutBom(sample: Uint8Array): string | undefined {
  const n = Math.min(sample.length - (sample.length % 2), 2000);
  if (n < 4) return undefined;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (sample[i] === 0) evenZero++;
    if (sample[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  if (oddZero > pairs * 0.4 && evenZero < pairs * 0.05) return 'utf-16le';
  if (evenZero > pairs * 0.4 && oddZero < pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** True when the bytes are valid UTF-8 (an incomplete character cut off by the sample's end is allowed). */
export function isUtf8(sample: Uint8Array, truncated: boolean): boolean {
  let end = sample.length;
  if (truncated) {
    // Drop a multi-byte sequence the sample cut in half.
    for (let back = 1; back <= 3 && end - back >= 0; back++) {
      const b = sample[end - back]!;
      if ((b & 0xc0) === 0xc0) {
        end -= back;
        break;
      }
      if ((b & 0x80) === 0) break;
    }
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

/** Refuses files that are clearly not text (spreadsheets, archives, images), naming what they look like. */
export function assertNotBinary(sample: Uint8Array, encoding: string, file: string): void {
  const magic: [number[], string][] = [
    [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (an .xlsx workbook?)'],
    [[0xd0, 0xcf, 0x11, 0xe0], 'an old Excel (.xls) workbook'],
    [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
    [[0x1f, 0x8b], 'a gzip archive'],
  ];
  const found = magic.find(([bytes]) => startsWith(sample, bytes));
  const nul = !encoding.startsWith('utf-16') && sample.includes(0);
  if (found || nul) {
    throw new EnrichError(
      'INPUT_UNREADABLE',
      `${file} is not a text file: it looks like ${found ? found[1] : 'binary data (it contains NUL bytes)'}; expected CSV, TSV, JSON or JSON Lines`,
      {
        location: { file },
        hint: 'Export the sheet as CSV (File > Save As > CSV UTF-8) and try again.',
      },
    );
  }
}

/**
 * Refuses an encoding given by hand that the file's bytes cannot be in: read so, every row
 * came out as one line of CJK-looking garbage or "\uFFFD", taken for a header over no rows,
 * and the run wrote an output without a single input row, exit 0. UTF-16 and UTF-32 text
 * has a NUL byte in every ASCII character (commas, tabs, line ends: a CSV always has some),
 * and a byte order mark or the bytes' shape may name the other byte order.
 */
export function assertEncodingFits(
  sample: Uint8Array,
  enc: DetectedEncoding,
  forced: string,
  file: string,
): void {
  const wide = /^(utf-?(16|32)|ucs-?[24])/.test(enc.encoding);
  if (!wide) return;
  const body = sample.subarray(enc.bomLength);
  const bom = BOMS.find((b) => startsWith(sample, b.bytes));
  const other =
    enc.encoding === 'utf-16le' ? 'utf-16be' : enc.encoding === 'utf-16be' ? 'utf-16le' : undefined;
  const why =
    body.length >= 4 && !body.includes(0)
      ? `it holds no NUL byte, which every comma, tab and line end of ${enc.encoding} text has`
      : other && bom?.encoding === other
        ? `it starts with the byte order mark of ${other}`
        : other && !bom && utf16WithoutBom(body) === other
          ? `its bytes are in the order of ${other}`
          : undefined;
  if (!why) return;
  throw new EnrichError('INPUT_UNREADABLE', `${file} cannot be read as ${forced}: ${why}`, {
    location: { file },
    hint: `Run again without --encoding (the file's own bytes say how it is encoded), or with the encoding it is in.`,
  });
}

/**
 * True when the bytes hold UTF-8 multi-byte characters ("é" as C3 A9), which read as
 * Windows-1252 turn into pairs like "Ã©": a file with those and a byte that is not UTF-8
 * is most likely UTF-8 with a few broken bytes (two exports pasted together), not 1252.
 */
export function holdsUtf8Characters(bytes: Buffer): boolean {
  return /[\xC2-\xDF][\x80-\xBF]|[\xE0-\xEF][\x80-\xBF]{2}|[\xF0-\xF4][\x80-\xBF]{3}/.test(
    bytes.toString('latin1'),
  );
}
