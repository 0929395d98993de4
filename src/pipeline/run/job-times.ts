/**
 * How long the jobs of a run took, by size. A small job (a file's last batch, a split part,
 * a credit retry) ends sooner than a full one: taken as the run's job time, it made every
 * full job look late (polled every second for minutes) or queued. So the question asked is:
 * the fastest time a job at least this large took.
 *
 * Kept as a frontier: sizes ascending and times ascending, since a job that was larger and
 * faster than another says all the smaller one said.
 */
export interface JobTimes {
  /**
   * Learns that a job of `records` records took `ms`; true (and the watchers are called) when
   * some answer of `fastest` changed.
   */
  add(records: number, ms: number): boolean;
  /** The fastest time a job of at least `records` records took, if one has. */
  fastest(records?: number): number | undefined;
  /** Calls `listener` when an answer of `fastest` changes; returns the function that stops it. */
  watch(listener: () => void): () => void;
}

export function createJobTimes(): JobTimes {
  // Stryker disable next-line ArrayDeclaration: an element that is no entry matches no size, and the first add drops it
  const frontier: { records: number; ms: number }[] = [];
  const watchers = new Set<() => void>();
  return {
    add(records, ms) {
      if (frontier.some((d) => d.records >= records && d.ms <= ms)) return false;
      const kept = frontier.filter(
        (d) =>
          d.records > records ||
          // Stryker disable next-line EqualityOperator: a smaller entry exactly as fast changes no answer
          d.ms < ms,
      );
      // Stryker disable next-line EqualityOperator: no entry of this size is left to come before
      const at = kept.findIndex((d) => d.records > records);
      kept.splice(at < 0 ? kept.length : at, 0, { records, ms });
      frontier.splice(0, frontier.length, ...kept);
      for (const w of [...watchers]) w();
      return true;
    },
    watch(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    fastest(records = 0) {
      return frontier.find((d) => d.records >= records)?.ms;
    },
  };
}
