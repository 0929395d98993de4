import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { namesOfLocalPart, readsAsName } from '../../src/sandbox/email-names.js';
import { transliterate } from '../../src/sandbox/normalise.js';
import { generateCompanies, lookupContact } from '../../src/sandbox/index.js';

describe('generated emails transliterate accented names', () => {
  it('writes Lefèvre as lefevre, and the letters NFD keeps whole from a table', () => {
    const c = lookupContact(
      { first_name: 'Marie', last_name: 'Lefèvre', company_name: 'Société Générale' },
      { seed: 1 },
    );
    expect(c.email).toBe('marie.lefevre@societe-generale.com');
    expect(c.company?.website).toBe('societe-generale.com');
    expect(transliterate('Groß Ærø Łódź Søren Þór')).toBe('Gross Aero Lodz Soren Thor');
  });

  it('leaves other scripts alone (a name without Latin letters still gets a stand-in word)', () => {
    expect(transliterate('李 Müller')).toBe('李 Muller');
    const c = lookupContact(
      { first_name: '李', last_name: '王', company_name: 'Acme' },
      { seed: 1 },
    );
    expect(c.email).toMatch(/^[a-z]{8}\.[a-z]{8}@acme\.com$/);
  });
});

describe('the name of a contact agrees with the email it was looked up by', () => {
  const byEmail = (email: string) => lookupContact({ business_email: email }, { seed: 1 });

  it('ana@ is Ana, jane.doe@ is Jane Doe, jdoe@ and info@ read as no name', () => {
    expect(byEmail('ana@globex.example').first_name).toBe('Ana');
    expect([
      byEmail('jane.doe@acme.com').first_name,
      byEmail('jane.doe@acme.com').last_name,
    ]).toEqual(['Jane', 'Doe']);
    expect(byEmail('josé.garcía@acme.com').last_name).toBe('García');
    expect(namesOfLocalPart('jdoe')).toEqual({});
    expect(namesOfLocalPart('info')).toEqual({});
    expect(namesOfLocalPart('x7')).toEqual({});
    expect(namesOfLocalPart('chris+news')).toEqual({ first: 'Chris' });
    expect(['ana', 'sven', 'chris', 'olivia', 'brian'].every(readsAsName)).toBe(true);
    expect(['jdoe', 'jsmith', 'xk', 'sales', 'a1b'].some(readsAsName)).toBe(false);
  });

  it('stays deterministic: the same email and seed give the same contact', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.integer({ min: 1, max: 1000 }), (email, seed) => {
        expect(lookupContact({ business_email: email }, { seed })).toEqual(
          lookupContact({ business_email: email }, { seed }),
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('--top N gives N distinct companies, each charged once', () => {
  it('never returns the same company twice in one answer, for any name and N up to 10', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 10 }),
        (name, top) => {
          fc.pre(!name.toLowerCase().includes('nomatch') && name.trim() !== '');
          const { records, charged } = generateCompanies(
            [{ company_name: name, custom_fields: {} }],
            {
              topMatches: top,
            },
          );
          expect(new Set(records.map((r) => r.website)).size).toBe(top);
          expect(new Set(records.map((r) => r.name)).size).toBe(top);
          expect(charged).toBe(top);
        },
      ),
      { numRuns: 300 },
    );
  });
});
