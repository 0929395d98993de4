import type { FileHandle } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openLineWriter } from '../../src/pipeline/journal/line-writer.js';

/** A file handle that records its writes and syncs, and fails when told to. */
function fakeHandle(failOn?: number) {
  const writes: string[] = [];
  let syncs = 0;
  const handle = {
    async write(text: string) {
      await new Promise((r) => setTimeout(r, 1));
      if (writes.length === failOn) throw new Error('disk full');
      writes.push(text);
    },
    async datasync() {
      syncs++;
    },
  } as unknown as FileHandle;
  return { handle, writes, syncs: () => syncs };
}

describe('the journal line writer (group commit)', () => {
  it('writes lines in order, those asked for during a write together, syncing once for a durable one', async () => {
    const f = fakeHandle();
    const w = openLineWriter(f.handle);
    const first = w.write('a\n', false);
    const rest = ['b\n', 'c\n', 'd\n'].map((l, i) => w.write(l, i === 1));
    await Promise.all([first, ...rest]);
    expect(f.writes).toEqual(['a\n', 'b\nc\nd\n']);
    expect(f.syncs()).toBe(1);
  });

  it('once a write fails, that line and every later one fail', async () => {
    const f = fakeHandle(1);
    const w = openLineWriter(f.handle);
    await w.write('a\n', false);
    await expect(w.write('b\n', false)).rejects.toThrow('disk full');
    await expect(w.write('c\n', false)).rejects.toThrow('disk full');
    await w.settled();
    expect(f.writes).toEqual(['a\n']);
  });
});
