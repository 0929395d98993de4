import { describe, expect, it } from 'vitest';
import { createFlightGate } from '../../src/pipeline/run/flight-gate.js';
import { createJobTimes } from '../../src/pipeline/run/job-times.js';

describe('job times by size', () => {
  it('answers the fastest time a job at least as large took', () => {
    const t = createJobTimes();
    expect(t.fastest()).toBeUndefined();
    expect(t.add(1000, 5000)).toBe(true);
    expect(t.add(200, 1200)).toBe(true); // a file's last batch
    expect(t.fastest(1000)).toBe(5000); // not the small job's 1.2 s
    expect(t.fastest(200)).toBe(1200);
    expect(t.fastest(201)).toBe(5000);
    expect(t.fastest()).toBe(1200);
    expect(t.fastest(1001)).toBeUndefined(); // none so large yet
  });

  it('keeps only what changes an answer, and says so to its watchers', () => {
    const t = createJobTimes();
    let heard = 0;
    const stop = t.watch(() => heard++);
    t.add(500, 3000);
    expect(t.add(400, 3500)).toBe(false); // smaller and slower: says nothing new
    expect(t.add(500, 3000)).toBe(false); // the same again
    expect(t.add(1000, 2500)).toBe(true); // larger and faster: replaces the 500's answer
    expect(t.fastest(100)).toBe(2500);
    expect(t.add(500, 2000)).toBe(true);
    expect(t.fastest(500)).toBe(2000);
    expect(t.fastest(501)).toBe(2500);
    expect(t.add(100, 2000)).toBe(false); // smaller, no faster
    expect(t.add(2000, 2500)).toBe(true); // larger, as fast: the 1000's answer is its own
    expect(t.fastest(1500)).toBe(2500);
    expect(t.fastest(1000)).toBe(2500);
    expect(t.add(2000, 2400)).toBe(true); // the same size, faster: its answer changes
    expect(t.fastest(2000)).toBe(2400);
    expect(heard).toBe(5); // once per change, never for what changed nothing
    stop();
    t.add(3000, 100);
    expect(heard).toBe(5);
  });
});

describe('the gate asks by size', () => {
  it('a small job done sooner is not the job time of the large ones, for polls or for the jobs in flight', () => {
    let t = 0;
    const gate = createFlightGate({ cap: 32, now: () => t });
    let heard = 0;
    gate.jobTimes.watch(() => heard++);
    gate.accepted('full', false, 1000);
    gate.accepted('last', false, 150);
    t = 1500;
    gate.ended('last', true);
    expect(heard).toBe(1);
    expect(gate.jobTimes.fastest(1000)).toBeUndefined();
    expect(gate.jobTimes.fastest(150)).toBe(1500);
    // Four full jobs in flight, no full job done: no job time for them yet, so slow start
    // goes on, and at 3 s the first is not taken for queued behind the small one's 1.5 s.
    for (const id of ['a', 'b', 'c']) gate.accepted(id, false, 1000);
    expect(gate.target()).toBe(8);
    t = 3000;
    gate.pending('a', undefined); // a 202: the gate decides again
    expect(gate.target()).toBe(8);
    t = 5000;
    gate.ended('full', true);
    expect(heard).toBe(2);
    expect(gate.jobTimes.fastest(1000)).toBe(5000);
    expect(gate.jobTimes.fastest()).toBe(1500);
  });
});

describe("the gate's job time, any size", () => {
  it('is the shortest time a job of this run took from acceptance to results; watchers hear when it falls', () => {
    let t = 0;
    const gate = createFlightGate({ cap: 32, now: () => t });
    const heard: (number | undefined)[] = [];
    const stop = gate.jobTimes.watch(() => heard.push(gate.jobTimes.fastest()));
    gate.accepted('a');
    gate.accepted('b');
    gate.accepted('r', true); // resumed: started before this run saw it
    gate.accepted('f');
    expect(gate.jobTimes.fastest()).toBeUndefined();
    t = 3000;
    gate.ended('r', true);
    gate.ended('f', false); // failed: no job time
    expect(gate.jobTimes.fastest()).toBeUndefined();
    t = 5000;
    gate.ended('a', true);
    t = 6000;
    gate.ended('b', true); // slower: no change
    expect(gate.jobTimes.fastest()).toBe(5000);
    gate.accepted('c');
    t = 10_000;
    stop();
    gate.ended('c', true); // faster, but nobody listens
    expect(gate.jobTimes.fastest()).toBe(4000);
    expect(heard).toEqual([5000]);
  });
});
