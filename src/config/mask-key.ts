/**
 * Masks an API key for display: its prefix (up to the last `_` or `-` in the first
 * 12 characters) and its last 4 characters, e.g. `sk_live_…a1b2`. Short keys show less,
 * so that never more than a third of a key is revealed.
 */
export function maskKey(key: string): string {
  if (key.length < 12) return '****';
  const head = key.slice(0, 12);
  const cut = Math.max(head.lastIndexOf('_'), head.lastIndexOf('-'));
  let prefix = cut > 0 ? key.slice(0, cut + 1) : '';
  if (prefix.length + 4 > key.length / 3) prefix = '';
  return `${prefix}…${key.slice(-4)}`;
}
