/** A contacts run's journal header, as the journal tests open runs with it. */
export const LEADS_HEADER = {
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
};

/** A clock that moves on a millisecond at each reading, from `start`. */
export function ticking(start = 1000): () => number {
  let t = start;
  return () => t++;
}
