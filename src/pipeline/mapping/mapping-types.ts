import type { CompanyInputField, ContactInputField } from '../../contract/index.js';

/** The two kinds of bulk input: one name everywhere, from the wire contract. */
export type { BulkKind } from '../../contract/paths.js';

/** A field of a bulk request element that a column can feed. */
export type ApiField = ContactInputField | CompanyInputField;

/** Which column (index into the header) feeds each field; `split` is a full-name column cut into first/last name. */
export interface ColumnMapping {
  fields: Partial<Record<ApiField, number>>;
  split?: { column: number };
}
