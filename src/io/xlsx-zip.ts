import { Readable } from 'node:stream';
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
  /** Hidden from the user (`state="hidden"` or `"veryHidden"`): Excel shows no tab for it. */
  hidden: boolean;
  /** A tab that holds no cells (a chart sheet, a dialog sheet): never a table to read. */
  chart: boolean;
  rows(): AsyncIterable<ExcelRow>;
}

export interface OpenWorkbook {
  sheets: WorkbookSheet[];
  /** Dates count from 1904 (old Mac workbooks), not 1900. */
  date1904: boolean;
  close(): void;
}

/** The parts of exceljs's streaming reader used here (internal to exceljs 4.4.0, pinned). */
interface Relationship {
  Id: string;
  Type?: string;
  Target: string;
}
interface ExcelWorkbookReader {
  model?: { sheets?: { name: string; rId: string; state?: string }[] };
  /** The workbook's properties (`date1904`), read by the worksheet reader. */
  properties?: { model?: { date1904?: boolean } };
  workbookRels?: Relationship[];
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(
    text: AsyncIterable<string>,
    sheetNo: string,
  ): Generator<{ value: AsyncIterable<ExcelRow> }>;
}

/** A worksheet part under its usual name (in any case). */
const SHEET_PART = /^xl\/worksheets\/sheet(\d+)\.xml$/i;

/**
 * A part of the zip as one UTF-8 text (multi-byte characters kept whole across chunks), its
 * SpreadsheetML elements without their namespace prefix.
 */
async function textOf(zip: ZipFile, entry: Entry): Promise<AsyncIterable<string>> {
  const stream = await zip.openReadStreamPromise(entry);
  // Stryker disable next-line StringLiteral: setEncoding('') is UTF-8 too
  stream.setEncoding('utf8');
  return namespacePrefixDropped(stream as AsyncIterable<string>);
}

/**
 * A worksheet's text, opened only when its rows are read (an unread sheet costs nothing). A
 * read left early destroys the stream: a Readable's iterator does when it is returned.
 */
function lazyText(zip: ZipFile, entry: Entry): AsyncIterable<string> {
  return {
    async *[Symbol.asyncIterator]() {
      yield* formulaResultsAsText(await textOf(zip, entry));
    },
  };
}

/**
 * Where a chunk's text is cut so that no tag is split: at the start of a tag it leaves open
 * (carried to the next chunk), else at its end.
 */
function tagCut(text: string): number {
  const open = text.lastIndexOf('<');
  // Stryker disable next-line EqualityOperator: the two are equal only when neither is found, and a text of no tag reads the same carried or not
  return open > text.lastIndexOf('>') ? open : text.length;
}

/** The namespaces whose elements exceljs reads by their bare names (`worksheet`, `c`, `Relationship`). */
const READ_NAMESPACES = new Set([
  'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
  'http://purl.oclc.org/ooxml/spreadsheetml/main',
  'http://schemas.openxmlformats.org/package/2006/relationships',
]);

/** A part's first element (its root), once its start tag is whole: `<x:worksheet xmlns:x="…">`. */
const ROOT = /<(?![?!])[^>]*>/;

/**
 * A part's text with its elements' namespace prefix dropped: `<x:worksheet xmlns:x="…main">`,
 * `<x:c r="A1">`, as the OpenXML SDK and .NET exporters write them, read as `<worksheet>`,
 * `<c r="A1">`. exceljs matches elements by their written name, so such a workbook read as
 * having no sheet, or no cells. The prefix is the one the root element binds to the
 * SpreadsheetML (or relationships) namespace, whatever it is; elements of other namespaces keep
 * theirs. A part without one (nearly all) is passed on untouched after its root tag.
 */
export async function* namespacePrefixDropped(
  chunks: AsyncIterable<string>,
): AsyncGenerator<string> {
  // The text up to the root's start tag, until it is whole; then undefined.
  let head: string | undefined = '';
  let prefix: RegExp | undefined;
  let carry = '';
  for await (const chunk of chunks) {
    if (head !== undefined) {
      head += chunk;
      const root = ROOT.exec(head);
      // A root tag longer than 64 KB is no root a workbook's part has: read as it is.
      if (!root && head.length < 65_536) continue;
      prefix = root ? prefixIn(root[0]) : undefined;
      carry = head;
      head = undefined;
    } else if (prefix) carry += chunk;
    else {
      yield chunk; // no prefix: the part as it is
      continue;
    }
    if (!prefix) {
      yield carry;
      carry = '';
      continue;
    }
    // A tag cut at the chunk's end waits for the next chunk.
    const cut = tagCut(carry);
    yield carry.slice(0, cut).replace(prefix, '<$1');
    carry = carry.slice(cut);
  }
  const rest = head ?? carry;
  // Stryker disable next-line StringLiteral: an empty last chunk yielded adds nothing to the text its reader joins
  if (rest !== '') yield prefix ? rest.replace(prefix, '<$1') : rest;
}

/** The tags of the prefix a root tag binds to a namespace read here (`<x:`, `</x:`), if any. */
function prefixIn(root: string): RegExp | undefined {
  for (const m of root.matchAll(/\sxmlns:([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    // Stryker disable next-line StringLiteral: one of the two quoted forms always matched, so the fallback is never reached
    if (READ_NAMESPACES.has(m[2] ?? m[3] ?? '')) {
      return new RegExp(`<(/?)${m[1]!.replace(/[.-]/g, '\\$&')}:`, 'g');
    }
  }
  return undefined;
}

/**
 * exceljs's streaming reader reads a formula's cached result with parseFloat unless its cell
 * says `t="str"`: an error result (`<c t="e"><f>1/0</f><v>#DIV/0!</v></c>`) became NaN, and the
 * cell read as empty; a boolean one (`<c t="b"><f>A2>5</f><v>1</v></c>`) read as 1. Cells of type
 * `e` are handed to it as text instead: a formula's error reads as Excel shows it (`#DIV/0!`),
 * and a plain error cell as its code, as it did before. A boolean cell with a formula is handed
 * to it as the text Excel shows (`TRUE`, `FALSE`); a plain boolean cell stays a boolean. A date
 * cell (type `d`) is handed to it as an error cell holding its ISO text (`dateCellText`), and a
 * formula never calculated as an error cell of a mark (`uncalculatedFormula`). A start tag cut at
 * a chunk's end waits for the next chunk, and so does a cell not closed yet.
 */
export async function* formulaResultsAsText(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let carry = '';
  for await (const chunk of chunks) {
    const text = carry + chunk;
    let cut = tagCut(text);
    cut = openCell(text, cut) ?? cut;
    cut = openElement(text, cut, '<is>', '</is>') ?? cut;
    carry = text.slice(cut);
    yield cellsRewritten(text.slice(0, cut));
  }
  // Only a sheet cut short ends inside a tag or a cell: its whole cells rewritten, the rest
  // passed on as it is, for exceljs to refuse.
  if (carry !== '') yield cellsRewritten(carry);
}

/** Whole cells of a sheet's text as `formulaResultsAsText` hands them to exceljs. */
function cellsRewritten(text: string): string {
  // The regexes are the function's own: Stryker's runner sees no mutant of a module-level one.
  // A cell's type attribute saying it holds an error (`<c r="D5" t="e">`).
  const errorCell = /(<c\b[^>]*?\st=")e"/g;
  // A whole boolean cell with a formula (a cell's first child), up to its value: never across
  // a cell's end.
  const booleanFormula =
    /(<c\b[^>]*?\st=")b("[^>]*(?<!\/)>)(\s*<f\b(?:(?!<\/c>)[\s\S])*?<v>)\s*([01])\s*(<\/v>)/g;
  // A whole formula cell (a cell's first child) with no result saved: no `<v>`, or an empty one
  // (`uncalculatedAsError` keeps an empty text result). A formula's text is XML-escaped, so it
  // holds no `<`.
  const uncalculatedCell =
    /<c\b([^>]*?)(?<!\/)>\s*<f\b[^>]*?(?:\/>|>([^<]*)<\/f>)\s*(<v\s*\/>|<v>\s*<\/v>)?\s*<\/c>/g;
  return inlineStringsJoined(
    text
      .replace(errorCell, '$1str"')
      .replace(uncalculatedCell, uncalculatedAsError)
      .replace(
        booleanFormula,
        (_, start: string, tag: string, body: string, v: string, end: string) =>
          `${start}str${tag}${body}${v === '1' ? 'TRUE' : 'FALSE'}${end}`,
      )
      .replace(
        DATE_CELL,
        (_, start: string, tag: string, body: string) =>
          `${start}e${tag}${body.replace(FORMULA, '')}</c>`,
      ),
  );
}

/**
 * The mark of a formula cell the program that wrote the workbook never calculated (exceljs and
 * openpyxl save `<c r="B2"><f>LOWER(A2)</f></c>`, or an empty `<v>`): it is handed to exceljs as
 * an error cell whose text is this mark and the formula (`uncalculatedFormula`). Every real error
 * cell is handed to exceljs as text, and a date cell's error text is an ISO date, so an error
 * value that starts with the mark is always one.
 */
const UNCALCULATED = '#UNCALCULATED';

/** An uncalculated formula cell as an error cell of the mark and its formula's text (still escaped). */
function uncalculatedAsError(
  cell: string,
  attributes: string,
  formula: string | undefined,
  emptyValue: string | undefined,
): string {
  // Excel saves a formula whose result is empty text as `t="str"` with `<v></v>`: calculated.
  if (emptyValue !== undefined && /\st="str"/.test(attributes)) return cell;
  return `<c${attributes.replace(/\st="[^"]*"/, '')} t="e"><v>${UNCALCULATED}=${formula ?? '…'}</v></c>`;
}

/**
 * The formula of a cell the writing program never calculated (`formulaResultsAsText` marks it),
 * as Excel shows it in the formula bar (`=LOWER(A2)`; the copy of a shared formula as `=…`, its
 * text being in the first cell); undefined for any other value.
 */
export function uncalculatedFormula(v: unknown): string | undefined {
  const text = dateCellText(v);
  return text?.startsWith(`${UNCALCULATED}=`) ? text.slice(UNCALCULATED.length) : undefined;
}

/**
 * A whole cell of type `d` (an ISO 8601 date as its value, `<c t="d"><v>2024-03-01</v></c>`,
 * as openpyxl writes dates with `iso_dates=True`), up to its end: never across a cell's end.
 */
const DATE_CELL = /(<c\b[^>]*?\st=")d("[^>]*(?<!\/)>)((?:(?!<\/c>)[\s\S])*?)<\/c>/g;
/** A cell's formula, empty (`<f t="shared" si="0"/>`) or not. */
const FORMULA = /<f\b[^>]*?(?:\/>|>[\s\S]*?<\/f>)/g;

/**
 * The ISO 8601 text of a date cell (type `d`), or undefined for any other value. exceljs reads
 * such a cell's value with parseFloat (`2024-03-01` as 2024, then a serial number); it is handed
 * to it as an error cell instead (`formulaResultsAsText`), whose value exceljs keeps as its text:
 * every real error cell is handed to it as text, so an error value only ever carries a date
 * (or the mark of a formula never calculated: `uncalculatedFormula`).
 * A formula of a date cell is dropped: its cached result is the value.
 */
export function dateCellText(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || !('error' in v)) return undefined;
  const text = (v as { error: unknown }).error;
  return typeof text === 'string' ? text.trim() : undefined;
}

/** A phonetic guide (furigana: `<rPh sb="0" eb="2"><t>タナカ</t></rPh>`) and its settings (`<phoneticPr …/>`). */
const PHONETIC = /<rPh\b[^>]*?(?:\/>|>[\s\S]*?<\/rPh>)|<phoneticPr\b[^>]*>(?:<\/phoneticPr>)?/g;

/** Text without its phonetic guides: Excel shows none of it in the cell. */
function withoutPhonetic(text: string): string {
  return text.includes('<rPh') || text.includes('<phoneticPr') ? text.replace(PHONETIC, '') : text;
}

/**
 * A cell's inline string (`<is>`) as one text element. exceljs keeps only the last `<t>` of it:
 * rich text (`<r><t>Ac</t></r><r><t>me</t></r>`) read as its last run, and a phonetic guide's
 * `<t>` (`<rPh><t>タナカ</t></rPh>`) replaced the text. The value is every run's text, in order,
 * without the phonetic guide, as Excel shows it. Plain cells, which have no `<is>`, cost one search.
 */
function inlineStringsJoined(text: string): string {
  if (!text.includes('<is>')) return text;
  return text.replace(/<is>([\s\S]*?)<\/is>/g, (_, body: string) => {
    let joined = '';
    for (const t of withoutPhonetic(body).matchAll(/<t\b[^>]*?(?:\/>|>([\s\S]*?)<\/t>)/g))
      joined += t[1] ?? '';
    return `<is><t>${joined}</t></is>`;
  });
}

/**
 * Where an element starts (`open`) that `text` (up to `end`) leaves open, when it does and it is
 * small: its text is then carried to the next chunk, to be read whole.
 */
function openElement(text: string, end: number, open: string, close: string): number | undefined {
  const at = text.lastIndexOf(open, end - 1);
  if (at === -1) return undefined;
  const tagEnd = text.indexOf('>', at);
  if (tagEnd !== -1 && tagEnd < end && text[tagEnd - 1] === '/') return undefined; // `<rPh …/>`
  const closed = text.indexOf(close, at);
  if (closed !== -1 && closed < end) return undefined;
  // An element of 64 KB is none a workbook has: go on rather than hold the part.
  return end - at < 65_536 ? at : undefined;
}

/**
 * The shared strings without their phonetic guides: exceljs reads a string's last `<t>`, so
 * a Japanese workbook's `<si><t>田中</t><rPh …><t>タナカ</t></rPh></si>` read as its reading,
 * タナカ (headers renamed, names replaced). A guide cut at a chunk's end waits for the next.
 */
export async function* phoneticGuidesDropped(
  chunks: AsyncIterable<string>,
): AsyncGenerator<string> {
  let carry = '';
  for await (const chunk of chunks) {
    const text = carry + chunk;
    let cut = tagCut(text);
    cut = openElement(text, cut, '<rPh', '</rPh>') ?? cut;
    carry = text.slice(cut);
    yield withoutPhonetic(text.slice(0, cut));
  }
  if (carry !== '') yield carry;
}

/**
 * Where a cell starts that `text` (up to `end`) leaves open, when it does and it is small: a
 * boolean, date or formula cell is rewritten whole. Only the last `<c` can be one (cells do not
 * nest); when it is another element (`<col` before the sheet's data, `<cfRule` after it), no
 * cell is open there.
 */
function openCell(text: string, end: number): number | undefined {
  // Stryker disable next-line ArithmeticOperator: a `<c` at `end` is a tag cut short, held by `tagCut` already
  const at = text.lastIndexOf('<c', end - 1);
  const tagEnd = text.indexOf('>', at);
  // Stryker disable next-line ConditionalExpression,UnaryOperator: a `<c` not found slices no cell tag all the same
  if (at === -1) return undefined;
  const tag = text.slice(at, tagEnd + 1);
  // Stryker disable next-line Regex: the tag is sliced from its `<c`, anchored or not
  if (!/^<c[\s>]/.test(tag) || tag.endsWith('/>')) return undefined;
  // Stryker disable next-line EqualityOperator: `</c>` cannot start at the start tag's `>`
  if (text.lastIndexOf('</c>', end) > tagEnd) return undefined;
  // A cell of 64 KB is no cell a sheet has: go on rather than hold the sheet.
  // Stryker disable next-line EqualityOperator: a cell of exactly 64 KB held or not reads the same
  return end - at < 65_536 ? at : undefined;
}

/** The base of the package's own relationships (`_rels/.rels`): its root. */
// Stryker disable next-line StringLiteral: any base without a "/" is the root
const PACKAGE_ROOT = '';

/** A part's path from a relationship's target: absolute, or relative to `base`'s folder. */
function partPath(base: string, target: string): string {
  const parts = target.startsWith('/') ? [] : base.split('/').slice(0, -1);
  for (const step of target.split('/')) {
    if (step === '..') parts.pop();
    else if (step !== '.' && step !== '') parts.push(step);
  }
  return parts.join('/');
}

/** The relationships file of part `path` (`xl/workbook.xml` → `xl/_rels/workbook.xml.rels`). */
function relsOf(path: string): string {
  const at = path.lastIndexOf('/');
  return `${path.slice(0, at + 1)}_rels/${path.slice(at + 1)}.rels`;
}

/** The target of the first relationship of a type (its URI's last segment), as a path. */
function related(rels: Relationship[], base: string, type: string): string | undefined {
  const rel = rels.find((r) => r.Type?.endsWith(`/${type}`));
  return rel && partPath(base, rel.Target);
}

/** The worksheets in the workbook's order; by their part numbers when the workbook lists none. */
function sheetParts(
  reader: ExcelWorkbookReader,
  workbook: string,
  entryOf: (path: string) => Entry | undefined,
  entries: Iterable<Entry>,
): { name: string; entry: Entry; hidden: boolean; chart: boolean }[] {
  // Stryker disable next-line ArrayDeclaration: a list without sheets is no list either
  const listed = (reader.model!.sheets ?? []).flatMap((sheet) => {
    const rel = reader.workbookRels!.find((r) => r.Id === sheet.rId);
    const entry = rel && entryOf(partPath(workbook, rel.Target));
    const hidden = sheet.state === 'hidden' || sheet.state === 'veryHidden';
    // A chartsheet (or dialogsheet) relationship: a tab Excel shows, with no cells in it.
    const chart = rel?.Type !== undefined && !rel.Type.endsWith('/worksheet');
    return entry ? [{ name: sheet.name, entry, hidden, chart }] : [];
  });
  if (listed.length > 0) return listed;
  // No workbook part (or none of its sheets found): the sheets by their part numbers.
  return [...entries]
    .flatMap((entry) => {
      const no = SHEET_PART.exec(entry.fileName)?.[1];
      return no === undefined
        ? []
        : [{ name: `Sheet${no}`, entry, no: Number(no), hidden: false, chart: false }];
    })
    .sort((a, b) => a.no - b.no);
}

/**
 * Opens a workbook: reads its central directory, then its relationships, workbook, shared
 * strings and styles (small, held), and lists its worksheets without reading them. The parts
 * are found through the package's relationships, as Excel finds them, whatever their names.
 */
export async function openWorkbook(filePath: string): Promise<OpenWorkbook> {
  const zip = await yauzl.openPromise(filePath, {
    autoClose: false,
    // Stryker disable next-line BooleanLiteral: yauzl's default; an entry whose size lies is otherwise caught by its inflate or its XML
    validateEntrySizes: true,
  });
  try {
    // Part names are case-insensitive in a package (ECMA-376 part 2).
    const entries = new Map<string, Entry>();
    for await (const entry of zip.eachEntry()) entries.set(entry.fileName.toLowerCase(), entry);
    const entryOf = (path: string) => entries.get(path.toLowerCase());
    const { default: ExcelJS } = await import('exceljs');
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(filePath, {
      sharedStrings: 'cache',
      styles: 'cache',
      hyperlinks: 'ignore',
      worksheets: 'emit',
      entries: 'ignore',
    }) as unknown as ExcelWorkbookReader;
    const part = async (path: string): Promise<Readable | undefined> => {
      const entry = entryOf(path);
      return entry && Readable.from(await textOf(zip, entry));
    };
    const relsAt = async (path: string): Promise<Relationship[]> => {
      const text = await part(path);
      // Stryker disable next-line ArrayDeclaration: a list holding a string has no relationship either
      if (!text) return [];
      await reader._parseRels(text);
      return reader.workbookRels!;
    };
    // Where the parts are is said by the package's relationships; the usual names otherwise.
    const workbook =
      related(await relsAt('_rels/.rels'), PACKAGE_ROOT, 'officeDocument') ?? 'xl/workbook.xml';
    const rels = await relsAt(relsOf(workbook));
    reader.workbookRels = rels;
    const book = await part(workbook);
    if (book) await reader._parseWorkbook(book);
    else {
      // No workbook part: no sheets listed, and dates count from 1900 (exceljs reads both).
      reader.model = {};
      reader.properties = {};
    }
    const strings = await part(related(rels, workbook, 'sharedStrings') ?? 'xl/sharedStrings.xml');
    if (strings)
      for await (const _ of reader._parseSharedStrings(
        Readable.from(phoneticGuidesDropped(strings as AsyncIterable<string>)),
      ));
    const styles = await part(related(rels, workbook, 'styles') ?? 'xl/styles.xml');
    if (styles) await reader._parseStyles(styles);
    const sheets = sheetParts(reader, workbook, entryOf, entries.values()).map(
      ({ name, entry, hidden, chart }, i) => ({
        name,
        position: i + 1,
        hidden,
        chart,
        rows(): AsyncIterable<ExcelRow> {
          // The number only names the sheet inside exceljs, which this reader does not use.
          // Stryker disable next-line ArithmeticOperator: as said
          const [first] = reader._parseWorksheet(lazyText(zip, entry), String(i + 1));
          return first!.value;
        },
      }),
    );
    return {
      sheets,
      date1904: reader.properties?.model?.date1904 === true,
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}
