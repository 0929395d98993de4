// What the jobs-in-flight policy's tests show it: limits, a view of the jobs in flight.
import type { FlightJob, FlightView } from '../../src/pipeline/run/in-flight.js';

export const limits = { cap: 32, probeMs: 500 };

/** A view at `now` (0) of `jobs`, all holding a place in flight, no 429 yet. */
export const view = (o: Partial<FlightView> & { jobs: FlightJob[] }): FlightView => ({
  now: 0,
  inFlight: o.jobs.length,
  throttled: 0,
  ...o,
});
