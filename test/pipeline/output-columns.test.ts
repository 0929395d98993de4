import { describe, expect, it } from 'vitest';
import { COMPANY_RECORD_FIELDS } from '../../src/contract/index.js';
import {
  earlierOutputColumns,
  writtenByBulkRun,
  companyColumns,
  contactColumns,
  flattenCompany,
  flattenContact,
  STATUS_COLUMNS,
} from '../../src/pipeline/join/output-columns.js';

describe('output columns', () => {
  it('contacts: the DESIGN.md order with the prefix', () => {
    expect(contactColumns('enriched_')).toEqual([
      'enriched_email',
      'enriched_office_phone',
      'enriched_mobile_phone',
      'enriched_first_name',
      'enriched_last_name',
      'enriched_title',
      'enriched_job_level',
      'enriched_department',
      'enriched_prof_network',
      'enriched_location_country',
      'enriched_location_state',
      'enriched_location_zip_code',
      'enriched_company_name',
      'enriched_company_description',
      'enriched_company_website',
      'enriched_company_employees_category',
      'enriched_company_revenue_category',
      'enriched_company_location_country',
      'enriched_company_location_state',
      'enriched_company_location_zip_code',
    ]);
    expect(contactColumns('x_')[0]).toBe('x_email');
    expect(STATUS_COLUMNS).toEqual([
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
    ]);
  });

  it('companies: every record field', () => {
    const cols = companyColumns('enriched_');
    expect(cols).toHaveLength(COMPANY_RECORD_FIELDS.length);
    expect(cols[0]).toBe('enriched_website');
    expect(cols.at(-1)).toBe('enriched_hq_country');
  });

  it('flattens a contact record aligned to its columns; missing parts are null', () => {
    const values = flattenContact({
      email: 'jane@acme.com',
      mobile_phone: null,
      location: { country: 'US', state: 'CA' },
      company: { name: 'Acme', location: { zip_code: '94105' } },
    });
    const byColumn = Object.fromEntries(contactColumns('').map((c, i) => [c, values[i]]));
    expect(byColumn).toMatchObject({
      email: 'jane@acme.com',
      mobile_phone: null,
      location_country: 'US',
      location_state: 'CA',
      location_zip_code: null,
      company_name: 'Acme',
      company_location_zip_code: '94105',
      title: null,
    });
    expect(values).toHaveLength(contactColumns('').length);
  });

  it('flattens a company record, numbers kept as numbers', () => {
    const values = flattenCompany({
      name: 'Acme',
      employees_number: 120,
      year_founded: 1999,
      hq_country: 'US',
    });
    const byColumn = Object.fromEntries(companyColumns('').map((c, i) => [c, values[i]]));
    expect(byColumn).toMatchObject({
      name: 'Acme',
      employees_number: 120,
      year_founded: 1999,
      hq_country: 'US',
      website: null,
    });
  });
});

describe('the columns of an earlier output, replaced when it is enriched again', () => {
  it('are the status columns and the prefixed ones this tool writes; a column of the user that only starts with the prefix is kept (regression: enriched_notes was dropped)', () => {
    const header = [
      'Email',
      'enriched_notes',
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'enriched_email',
      'enriched_name_2',
      'enriched_location_country',
      'enriched_2024',
    ];
    const bulk = (prefix: string) => writtenByBulkRun(prefix);
    expect(earlierOutputColumns(header, bulk('enriched_'))).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(earlierOutputColumns(header, bulk('x_'))).toEqual([2, 3, 4, 5]);
    // An empty prefix takes no column for one of the run's fields.
    expect(earlierOutputColumns(['email', 'enrich_status'], bulk(''))).toEqual([1]);
    // Not an output of this tool: nothing is taken for one.
    expect(earlierOutputColumns(['Email', 'enriched_email'], bulk('enriched_'))).toEqual([]);
  });

  it("takes a companies output's fields whose names end in a number (hq_address_1) for the run's own, numbered or not", () => {
    const header = [
      'Account Name',
      'enrich_status',
      'enriched_name',
      'enriched_hq_address_1',
      'enriched_hq_address_2',
      'enriched_hq_address_1_2',
      'enriched_hq_address_2_3',
      'enriched_address_1',
    ];
    // Each of the run's columns is replaced (a re-run used to refuse them as the user's own).
    expect(earlierOutputColumns(header, writtenByBulkRun('enriched_'))).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
