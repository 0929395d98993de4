/**
 * A copy of `o` with `changes` set: what `{ ...o, ...changes }` gives, made by Object.assign.
 *
 * Node 20's V8 gives every copy an object spread makes a hidden class of its own once that
 * spread has seen several shapes (Node 24's does not): a class made for each copy, and about
 * 250 bytes more each. That costs most where a copy is made once per row or held by the
 * thousand (request elements, cached and duplicate rows' outcomes, rows without some
 * columns; BENCHMARKS.md, session 12). Object.assign's copies share their classes; the
 * tests check it with V8's own `%HaveSameMap` (`test/helpers/hidden-class.ts`).
 */
export function copyWith<T extends object>(o: T, changes: Partial<T>): T {
  return Object.assign({}, o, changes);
}
