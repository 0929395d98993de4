/**
 * The journal events of `verify-emails`: one line per address sent and one per answer, so a
 * run killed at any point resumes without verifying an answered address again. An address
 * journaled `vsend` and never answered may have been charged: it is not sent again by itself.
 */

/** One address about to be sent (flushed to the disk before its request). */
export interface VerifySendEvent {
  t: 'vsend';
  addr: string;
  at: number;
}

/** The service's verdict on an address. */
export interface VerifyAnswerEvent {
  t: 'vanswer';
  addr: string;
  status: string;
  charged: boolean;
  remaining: number | null;
  /** The in-band `error` the answer carried, if any. */
  error?: string;
  at: number;
}

/**
 * An address that got no verdict: `unconfirmed` (its answer was lost: it may have been
 * charged), or a known failure with its error code (nothing was charged; sent again next run,
 * except a refusal of the address itself, API_VALIDATION, which is final).
 */
export interface VerifyFailEvent {
  t: 'vfail';
  addr: string;
  code: string;
  message: string;
  unconfirmed: boolean;
  at: number;
}

export type VerifyEvent = VerifySendEvent | VerifyAnswerEvent | VerifyFailEvent;

/** What the journal knows of one address: sent, answered, or failed. */
export type VerifyState =
  | { state: 'sent'; at: number }
  | { state: 'answered'; answer: Omit<VerifyAnswerEvent, 't' | 'addr'> }
  | { state: 'failed'; code: string; message: string; unconfirmed: boolean };

/** True for the events of this file. */
export function isVerifyEvent(e: { t: string }): e is VerifyEvent {
  return e.t === 'vsend' || e.t === 'vanswer' || e.t === 'vfail';
}

/** Folds one verification event into the per-address table (the last word on an address wins). */
export function applyVerifyEvent(table: Map<string, VerifyState>, e: VerifyEvent): void {
  if (e.t === 'vsend') table.set(e.addr, { state: 'sent', at: e.at });
  else if (e.t === 'vanswer') {
    const { t: _t, addr: _a, ...answer } = e;
    table.set(e.addr, { state: 'answered', answer });
  } else
    table.set(e.addr, {
      state: 'failed',
      code: e.code,
      message: e.message,
      unconfirmed: e.unconfirmed,
    });
}
