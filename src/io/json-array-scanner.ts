/** One top-level element of a JSON array, as text, with the line it starts on. */
export interface ScannedElement {
  text: string;
  line: number;
}

/** Why the scanner stopped: what it expected, what it got, on which line. */
export class JsonScanError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

type State = 'start' | 'before' | 'inside' | 'after' | 'end';

/**
 * Splits a streamed JSON array into its top-level elements without holding the
 * whole document: only the element being read is buffered. Each element must be
 * an object; it is handed out as text for JSON.parse.
 */
export class JsonArrayScanner {
  private state: State = 'start';
  private line = 1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private parts: string[] = [];
  private elementLine = 1;
  private count = 0;
  private lastWasCr = false;
  /** Characters of the element being read held in `parts`. */
  private size = 0;

  /** `maxChars`: the longest element accepted (longer ones are refused while read, never held whole). */
  constructor(private readonly maxChars = Infinity) {}

  /** The line the scanner has reached. */
  lineNow(): number {
    return this.line;
  }

  /** Feeds a chunk; returns the elements it completed. */
  push(chunk: string): ScannedElement[] {
    const out: ScannedElement[] = [];
    let startIndex = this.state === 'inside' ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      if (ch === '\n') {
        if (!this.lastWasCr) this.line++;
      } else if (ch === '\r') this.line++;
      this.lastWasCr = ch === '\r';
      if (this.state === 'inside') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (ch === '\\') this.escaped = true;
          else if (ch === '"') this.inString = false;
        } else if (ch === '"') this.inString = true;
        else if (ch === '{' || ch === '[') this.depth++;
        else if (ch === '}' || ch === ']') {
          this.depth--;
          if (this.depth === 0) {
            this.checkSize(this.size + i + 1 - startIndex);
            this.parts.push(chunk.slice(startIndex, i + 1));
            this.size = 0;
            out.push({ text: this.parts.join(''), line: this.elementLine });
            this.parts = [];
            this.state = 'after';
          }
        }
        continue;
      }
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\uFEFF') continue;
      if (this.state === 'start') {
        if (ch !== '[')
          this.fail(`expected a JSON array of objects ("[ {...}, ... ]"), got ${show(ch)}`);
        this.state = 'before';
      } else if (this.state === 'before') {
        if (ch === ']' && this.count === 0) this.state = 'end';
        else if (ch !== '{')
          this.fail(
            `expected an object ("{") as element ${this.count + 1} of the array, got ${show(ch)}`,
          );
        else {
          this.state = 'inside';
          this.depth = 1;
          this.count++;
          this.elementLine = this.line;
          startIndex = i;
        }
      } else if (this.state === 'after') {
        if (ch === ',') this.state = 'before';
        else if (ch === ']') this.state = 'end';
        else this.fail(`expected "," or "]" after element ${this.count}, got ${show(ch)}`);
      } else {
        this.fail(`expected nothing after the closing "]", got ${show(ch)}`);
      }
    }
    if (this.state === 'inside') {
      this.size += chunk.length - startIndex;
      this.checkSize(this.size);
      this.parts.push(chunk.slice(startIndex));
    }
    return out;
  }

  /** Checks the document ended where an array may end. */
  finish(): void {
    if (this.state === 'start') this.fail('expected a JSON array of objects, got an empty file');
    if (this.state !== 'end')
      this.fail('expected the array to be closed with "]", got the end of the file');
  }

  private checkSize(size: number): void {
    if (size <= this.maxChars) return;
    this.line = this.elementLine;
    this.fail(
      `element ${this.count} of the array is longer than ${this.maxChars} characters: expected at most that many a record`,
    );
  }

  private fail(message: string): never {
    throw new JsonScanError(message, this.line);
  }
}

const show = (ch: string) => JSON.stringify(ch);
