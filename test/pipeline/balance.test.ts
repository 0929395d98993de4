import { describe, expect, it } from 'vitest';
import { balanceLog } from '../../src/pipeline/run/balance.js';

// F1: whether an answer's balance held while its job ran. A rise is counted only against
// figures that came before the request was sent: answers in flight together come in any order.
describe('the balance log', () => {
  it('a figure above one that came before its request was sent is a rise after every earlier mark', () => {
    const log = balanceLog();
    const submit = log.mark(); // 0
    log.seen(5, 1, submit);
    const download = log.mark(); // 1
    expect(log.roseAfter(submit)).toBe(false);
    log.seen(1000, 2, download);
    expect(log.roseAfter(submit)).toBe(true);
    expect(log.roseAfter(download)).toBe(true);
    // A request sent after the rise was seen: no rise since.
    expect(log.roseAfter(log.mark())).toBe(false);
  });

  it('answers to requests in flight together, in any order, are no rise', () => {
    const log = balanceLog();
    const a = log.mark();
    const b = log.mark();
    // b was processed first (90), a's answer (100, read earlier by the service) came last.
    log.seen(90, 1, b);
    log.seen(100, 2, a);
    expect(log.roseAfter(0)).toBe(false);
    // The report, which reads the figures in the order they came, still says it cannot tell.
    expect(log.report()?.drop).toBeNull();
  });

  it('compares with the lowest figure that came before the request, not the last', () => {
    const log = balanceLog();
    log.seen(100, 1, log.mark());
    log.seen(40, 2, log.mark());
    log.seen(60, 3, 0); // in flight since before the first figure: no rise
    expect(log.roseAfter(0)).toBe(false);
    log.seen(60, 4, log.mark()); // sent after 40 came: a rise (a top-up of 20 at least)
    expect(log.roseAfter(0)).toBe(true);
    expect(log.roseAfter(log.mark())).toBe(false);
  });

  it('a falling balance, or equal figures, or no figure, is no rise; unknown sending counts nothing', () => {
    const log = balanceLog();
    const m = log.mark();
    log.seen('n/a', 1, m);
    log.seen(50, 1, m);
    log.seen(50, 2, log.mark());
    log.seen(10, 3, log.mark());
    expect(log.roseAfter(m)).toBe(false);
    log.seen(900, 4); // when its request was sent is not known
    expect(log.roseAfter(m)).toBe(false);
    expect(log.report()).toMatchObject({ first: { remaining: 50 }, last: { remaining: 900 } });
  });
});
