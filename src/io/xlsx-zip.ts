import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';

/**
 * A workbook's parts read through the zip's central directory (yauzl), then parsed by
 * exceljs's streaming reader, one part at a time, in the order the parts depend on each other.
 *
 * Why not exceljs's own `WorkbookReader.read`: it reads the archive front to back
 * (unzipper's `Parse`), which ends its list of entries when the file has been *read*, not when
 * its entries have been *handed over*. On a small file the last entries are then lost at
 * random: `xl/workbook.xml` (written last by exceljs, so "Cannot read properties of undefined
 * (reading 'sheets')"), or the shared strings (every text cell then silently read as an
 * index). And it decodes each chunk of XML on its own, so a character split between two
 * chunks became U+FFFD ("M��ller"). Here each part is decoded as one UTF-8 stream, and
 * nothing depends on the order the parts are stored in. (exceljs issue 3064.)
 */

/** One row as exceljs's worksheet reader gives it. */
export interface ExcelRow {
  number: number;
  values: unknown[];
  getCell(col: number): { numFmt?: string };
}

/** A worksheet of the workbook, in the workbook's own order; its rows are read when asked for. */
export interface WorkbookSheet {
  name: string;
  /** 1-based place in the workbook's list of sheets. */
  position: number;
  rows(): AsyncIterable<ExcelRow>;
}

export interface OpenWorkbook {
  sheets: WorkbookSheet[];
  close(): void;
}

/** The parts of exceljs's streaming reader used here (internal to exceljs 4.4.0, pinned). */
interface ExcelWorkbookReader {
  model?: { sheets?: { name: string; rId: string }[] };
  workbookRels?: { Id: string; Target: string }[];
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(
    text: AsyncIterable<string>,
    sheetNo: string,
  ): Generator<{ value: AsyncIterable<ExcelRow> }>;
}

const SHEET_PART = /^xl\/worksheets\/sheet(\d+)\.xml$/;

/** A part of the zip as one UTF-8 text stream (multi-byte characters kept whole across chunks). */
async function textOf(zip: ZipFile, entry: Entry): Promise<Readable> {
  const stream = await zip.openReadStreamPromise(entry);
  stream.setEncoding('utf8');
  return stream;
}

/** A worksheet's text, opened only when its rows are read (an unread sheet costs nothing). */
function lazyText(zip: ZipFile, entry: Entry): AsyncIterable<string> {
  return {
    async *[Symbol.asyncIterator]() {
      const stream = await textOf(zip, entry);
      try {
        for await (const chunk of stream) yield chunk as string;
      } finally {
        stream.destroy();
      }
    },
  };
}

/** The zip path of a relationship's target, relative to `xl/` unless it is absolute. */
function partPath(target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  return `xl/${target.replace(/^\.\//, '')}`;
}

/** The worksheets in the workbook's order; by their part numbers when the workbook lists none. */
function sheetParts(
  reader: ExcelWorkbookReader,
  entries: Map<string, Entry>,
): { name: string; entry: Entry; sheetNo: string }[] {
  const listed = (reader.model?.sheets ?? []).flatMap((sheet) => {
    const rel = reader.workbookRels?.find((r) => r.Id === sheet.rId);
    const path = rel && partPath(rel.Target);
    const entry = path === undefined ? undefined : entries.get(path);
    if (!entry || !path) return [];
    return [{ name: sheet.name, entry, sheetNo: SHEET_PART.exec(path)?.[1] ?? '0' }];
  });
  if (listed.length > 0) return listed;
  return [...entries.values()]
    .flatMap((entry) => {
      const no = SHEET_PART.exec(entry.fileName)?.[1];
      return no === undefined ? [] : [{ name: `Sheet${no}`, entry, sheetNo: no }];
    })
    .sort((a, b) => Number(a.sheetNo) - Number(b.sheetNo));
}

/**
 * Opens a workbook: reads its central directory, then its relationships, workbook, shared
 * strings and styles (small, held), and lists its worksheets without reading them.
 */
export async function openWorkbook(filePath: string): Promise<OpenWorkbook> {
  const zip = await yauzl.openPromise(filePath, { autoClose: false, validateEntrySizes: true });
  try {
    const entries = new Map<string, Entry>();
    for await (const entry of zip.eachEntry()) entries.set(entry.fileName, entry);
    const { default: ExcelJS } = await import('exceljs');
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(filePath, {
      sharedStrings: 'cache',
      styles: 'cache',
      hyperlinks: 'ignore',
      worksheets: 'emit',
      entries: 'ignore',
    }) as unknown as ExcelWorkbookReader;
    const part = async (name: string): Promise<Readable | undefined> => {
      const entry = entries.get(name);
      return entry && (await textOf(zip, entry));
    };
    const rels = await part('xl/_rels/workbook.xml.rels');
    if (rels) await reader._parseRels(rels);
    const workbook = await part('xl/workbook.xml');
    if (workbook) await reader._parseWorkbook(workbook);
    const strings = await part('xl/sharedStrings.xml');
    if (strings) for await (const _ of reader._parseSharedStrings(strings));
    const styles = await part('xl/styles.xml');
    if (styles) await reader._parseStyles(styles);
    const sheets = sheetParts(reader, entries).map(({ name, entry, sheetNo }, i) => ({
      name,
      position: i + 1,
      rows(): AsyncIterable<ExcelRow> {
        const [first] = reader._parseWorksheet(lazyText(zip, entry), sheetNo);
        return first!.value;
      },
    }));
    return { sheets, close: () => zip.close() };
  } catch (err) {
    zip.close();
    throw err;
  }
}
