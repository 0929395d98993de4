import { describe, expect, it } from 'vitest';
import { RowIndex } from '../../src/pipeline/join/row-index.js';

describe('RowIndex', () => {
  it('stores values across chunk boundaries', () => {
    const idx = new RowIndex();
    for (let i = 0; i < 200_000; i++) idx.push(i % 3 === 0 ? -1 : i);
    expect(idx.length).toBe(200_000);
    for (const i of [0, 1, 65_535, 65_536, 65_537, 131_072, 131_073, 199_999]) {
      expect(idx.get(i)).toBe(i % 3 === 0 ? -1 : i);
    }
    expect(idx.get(200_000)).toBeUndefined();
    expect(idx.get(-1)).toBeUndefined();
  });
});
