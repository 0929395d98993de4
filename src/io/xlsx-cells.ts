/**
 * Spreadsheet cells as a user sees them, and as the workbook holds them. exceljs hands a
 * cell's value as a string, number, boolean, Date (a number with a date format), or an
 * object for a formula, rich text, a hyperlink or an error.
 */
import { numberText } from './xlsx-number-format.js';

/**
 * A number a time-only format shows (`h:mm`, `[h]:mm:ss`): its text as an ISO 8601 time
 * (`18:00:00`; hours past 24 for an elapsed `[h]` format: `36:00:00`), and its number (days),
 * written back to a workbook as a time.
 */
export class SheetTime {
  constructor(
    readonly text: string,
    readonly days: number,
    /** An elapsed-time format (`[h]:mm`): hours past 24 shown as such. */
    readonly elapsed: boolean,
  ) {}
}

/** The value a cell holds, as written back to a workbook: a formula is its last result. */
export type SheetValue = string | number | boolean | Date | SheetTime | null;

/** A cell's typed value: a formula's cached result, rich text's text, a hyperlink's text, an error's code. */
export function sheetValue(v: unknown): SheetValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v;
  if (typeof v !== 'object') return String(v);
  const o = v as Record<string, unknown>;
  if ('result' in o || 'formula' in o || 'sharedFormula' in o) return sheetValue(o.result);
  if (Array.isArray(o.richText))
    return (o.richText as { text?: unknown }[]).map((r) => String(r.text ?? '')).join('');
  if ('error' in o) return String(o.error);
  if ('text' in o) return sheetValue(o.text);
  return JSON.stringify(v);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A date cell as ISO 8601: `2024-03-01`, or `2024-03-01T09:30:00` when it has a time of day. */
export function isoDate(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  // Excel's dates have no zone: exceljs reads the serial number as UTC, so UTC reads it back.
  const day = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const secs = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
  if (secs === 0) return day;
  return `${day}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

// An ISO 8601 date, with a time or not, in UTC or without a zone; or a time alone.
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(?:Z|[+-]00:?00)?$/;
const ISO_TIME = /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/;

/**
 * A date cell's ISO 8601 text (`t="d"`) as a date (`2024-03-01`, `2024-03-01T09:30:00`), or a
 * time alone (`09:30:00`) as a time. A date in UTC (`Z`, `+00:00`) is the same date: a
 * workbook's dates have no zone, and are read as UTC everywhere. Undefined for any other text:
 * another offset (`+09:00`) cannot be held by a date cell without moving its time or losing
 * the zone, so that cell reads as the text written.
 */
export function isoCellValue(text: string): Date | SheetTime | undefined {
  const time = ISO_TIME.exec(text);
  if (time) {
    const [h, m, s] = [Number(time[1]), Number(time[2]), Number(time[3] ?? 0)];
    if (h > 23 || m > 59 || s > 59) return undefined;
    const secs = h * 3600 + m * 60 + s;
    return new SheetTime(`${pad(h)}:${pad(m)}:${pad(s)}`, secs / 86_400, false);
  }
  const d = ISO_DATE.exec(text);
  if (!d) return undefined;
  const [y, mo, day, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(d[i] ?? 0)) as number[];
  const ms = Math.round(Number(d[7] ?? 0) * 1000);
  const date = new Date(Date.UTC(y!, mo! - 1, day!, h, mi, s, ms));
  // 2024-02-30 or 25:00 are no dates: Date.UTC would roll them over.
  const same =
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo! - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi;
  return same && s! < 60 ? date : undefined;
}

/**
 * Text as a workbook stores it (OOXML's ST_Xstring): a character XML cannot hold, or that an XML
 * reader would change (a carriage return becomes a line feed), as `_xHHHH_`, as Excel writes
 * them (`line one_x000D_` before a line feed); a text that already reads as such an escape gets
 * its underscore escaped (`_x005F_x0041_`), so it reads back as written.
 */
export function xlsxStoredText(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u0008\u000b-\u001f]|_x[0-9A-Fa-f]{4}_/.test(text)) return text;
  return (
    text
      .replace(/_(x[0-9A-Fa-f]{4}_)/g, '_x005F_$1')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b-\u001f]/g, (c) => `_x${hex4(c.charCodeAt(0))}_`)
  );
}

/** Text as a workbook's reader shows it: `_xHHHH_` escapes (`xlsxStoredText`) decoded, as Excel does. */
export function xlsxShownText(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, h: string) =>
    String.fromCharCode(parseInt(h, 16)),
  );
}

const hex4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');

/** The text a user sees in a cell (a Date as ISO 8601, TRUE/FALSE, a formula's result). */
export function cellText(v: unknown, numFmt?: string): string {
  const value = sheetValue(v);
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return numberText(value, numFmt);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof SheetTime) return value.text;
  return isoDate(value);
}

/** A time-only format: `clock` (a time of day), `elapsed` (`[h]:mm`), or null (a date, or no time). */
const timeFormats = new Map<string, 'clock' | 'elapsed' | null>();

function timeKind(numFmt: string): 'clock' | 'elapsed' | null {
  let kind = timeFormats.get(numFmt);
  if (kind === undefined) {
    const bare = numFmt
      .replace(/"[^"]*"|\\./g, '')
      .replace(/\[(?![hms]+\])[^\]]*\]/gi, '') // colours, conditions, locales
      .replace(/AM\/PM|A\/P/gi, '');
    kind =
      /[ydegb]/i.test(bare) || !/[hs]/i.test(bare)
        ? null
        : /\[[hms]+\]/i.test(bare)
          ? 'elapsed'
          : 'clock';
    timeFormats.set(numFmt, kind);
  }
  return kind;
}

/** 1899-12-30, day 0 of Excel's 1900 date system, in ms; the 1904 system starts 1462 days later. */
const DAY0 = Date.UTC(1899, 11, 30);
const DAY_MS = 86_400_000;

/**
 * A date cell (exceljs's reading of a number with a date or time format) whose format shows only
 * a time, as that time: `h:mm` on 0.75 is `18:00:00`, not `1899-12-30T18:00:00`; a date part
 * the format does not show is left out of the text (and kept in the number). Undefined for any
 * other format.
 */
export function timeOnly(d: Date, numFmt: string, date1904: boolean): SheetTime | undefined {
  const kind = timeKind(numFmt);
  if (!kind || Number.isNaN(d.getTime())) return undefined;
  const days = (d.getTime() - DAY0) / DAY_MS - (date1904 ? 1462 : 0);
  const secs = Math.round((kind === 'elapsed' ? days : days - Math.floor(days)) * 86_400);
  const clock = kind === 'clock' ? secs % 86_400 : secs;
  const text = `${pad(Math.floor(clock / 3600))}:${pad(Math.floor(clock / 60) % 60)}:${pad(clock % 60)}`;
  return new SheetTime(text, days, kind === 'elapsed');
}
