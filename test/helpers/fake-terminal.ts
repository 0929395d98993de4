import { stripVTControlCharacters } from 'node:util';

/**
 * A stand-in for a terminal on stderr: keeps the screen that ora's writes and cursor moves
 * would leave on a real one, so a test reads what a person would see.
 */
export class FakeTerminal {
  readonly isTTY = true;
  readonly writes: string[] = [];
  cursorMoves = 0;
  cursorHidden = false;
  private screen: string[] = [''];
  private row = 0;
  private col = 0;

  constructor(readonly columns: number | undefined) {}

  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
    const raw = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    this.writes.push(raw);
    if (raw.includes('\u001B[?25l')) this.cursorHidden = true;
    if (raw.includes('\u001B[?25h')) this.cursorHidden = false;
    for (const [i, part] of stripVTControlCharacters(raw).split('\n').entries()) {
      if (i > 0) {
        this.row++;
        this.col = 0;
      }
      const line = (this.screen[this.row] ?? '').padEnd(this.col);
      this.screen[this.row] = line.slice(0, this.col) + part + line.slice(this.col + part.length);
      this.col += part.length;
    }
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }

  cursorTo(x: number): boolean {
    this.cursorMoves++;
    this.col = x;
    return true;
  }

  moveCursor(dx: number, dy: number): boolean {
    this.cursorMoves++;
    this.col = Math.max(0, this.col + dx);
    this.row = Math.max(0, this.row + dy);
    return true;
  }

  clearLine(dir: -1 | 0 | 1): boolean {
    this.cursorMoves++;
    const line = this.screen[this.row] ?? '';
    this.screen[this.row] =
      dir === 1
        ? line.slice(0, this.col)
        : dir === -1
          ? ' '.repeat(this.col) + line.slice(this.col)
          : '';
    return true;
  }

  /** The non-empty lines on the screen now, as a person would read them. */
  visible(): string[] {
    return this.screen.map((l) => l.trimEnd()).filter((l) => l !== '');
  }

  asStream(): NodeJS.WriteStream {
    return this as unknown as NodeJS.WriteStream;
  }
}
