import { setFlagsFromString } from 'node:v8';

// V8's own test of hidden classes (maps), made callable in this process.
setFlagsFromString('--allow-natives-syntax');
const same = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

/**
 * The objects of `list` whose hidden class differs from the first object with the same keys:
 * none when they were copied with `copyWith` (src/copy-with.ts), thousands when an object
 * spread made them on Node 20.
 */
export function apartFromTheirShape(list: readonly object[]): object[] {
  const first = new Map<string, object>();
  return list.filter((o) => {
    const keys = Object.keys(o).join();
    const f = first.get(keys);
    if (f === undefined) first.set(keys, o);
    return f !== undefined && !same(o, f);
  });
}
