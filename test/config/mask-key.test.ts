import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskKey } from '../../src/config/mask-key.js';

describe('maskKey', () => {
  it('shows the prefix and the last 4 characters', () => {
    expect(maskKey('sk_sbx_AbCdEfGhIjKlMnOpQrStUvWxYz012345')).toBe('sk_sbx_…2345');
    expect(maskKey('abcdefghijklmnopqrstuvwx1234')).toBe('…1234');
  });

  it('hides short keys entirely', () => {
    expect(maskKey('short')).toBe('****');
    expect(maskKey('sk_12345678')).toBe('****');
  });

  it('never reveals more than a third of a key', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 80 }), (key) => {
        const shown = maskKey(key).replace('…', '').replace('****', '');
        return shown.length <= Math.ceil(key.length / 3) + 4 && (key.length >= 12 || shown === '');
      }),
    );
  });
});
