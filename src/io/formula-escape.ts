/** How service values that a spreadsheet could run as formulas are written. */
export type FormulaEscape = 'auto' | 'always' | 'never';

const TRIGGERS = /^[=+\-@\t\r]/;
// A phone number ("+1 (415) 555-0100") or a number ("-12.5", "+3e4") is data, not a formula.
// Only spaces count as a phone's blanks: a tab or CR at the start is itself a trigger.
const PHONE = /^\+?[\d ().-]{6,}$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Prefixes `'` to a value a spreadsheet would evaluate (`=`, `+`, `-`, `@`, tab, CR at the start). */
export function escapeFormula(value: string, mode: FormulaEscape): string {
  if (mode === 'never' || !TRIGGERS.test(value)) return value;
  if (mode === 'auto' && (NUMBER.test(value) || (PHONE.test(value) && /\d{3}/.test(value)))) {
    return value;
  }
  return `'${value}`;
}
