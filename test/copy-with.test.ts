import { describe, expect, it } from 'vitest';
import { copyWith } from '../src/copy-with.js';
import { apartFromTheirShape } from './helpers/hidden-class.js';

describe('copyWith', () => {
  it("gives what a spread gives: the object's keys in order, the changes set, the original untouched", () => {
    const o = { a: 1, b: 'x', c: null as string | null };
    const copy = copyWith(o, { b: 'y', c: 'z' });
    expect(copy).toStrictEqual({ a: 1, b: 'y', c: 'z' });
    expect(Object.keys(copy)).toEqual(Object.keys({ ...o, b: 'y', c: 'z' }));
    expect(o).toStrictEqual({ a: 1, b: 'x', c: null });
    expect(copy).not.toBe(o);
  });

  it('makes copies that share their hidden class where a spread gave each its own (Node 20)', () => {
    const shapes = (i: number): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      if (i % 2) o.a = `x${i}`;
      o.b = i % 3 ? 'y' : null;
      if (i % 5) o.c = [i];
      o.d = i % 7 ? true : 'unknown';
      return o;
    };
    const copies = Array.from({ length: 40_000 }, (_, i) => copyWith(shapes(i), { e: i }));
    expect(apartFromTheirShape(copies)).toEqual([]);
  });
});
