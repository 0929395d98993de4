import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import {
  detectMapping,
  loadMapping,
  mappingToJson,
  saveMapping,
} from '../../src/pipeline/mapping/map-columns.js';
import { failure, mapped } from '../helpers/mapping.js';

describe('detectMapping: header sets from real exports (contacts)', () => {
  it('HubSpot', () => {
    const header = [
      'Record ID',
      'First Name',
      'Last Name',
      'Email',
      'Phone Number',
      'Company Name',
      'Website URL',
      'Job Title',
      'Lifecycle Stage',
    ];
    expect(
      mapped('contacts', header, [
        ['1', 'Jane', 'Doe', 'jane@acme.com', '+1 415', 'Acme', 'https://acme.com', 'VP', 'lead'],
      ]),
    ).toEqual({
      business_email: 'Email',
      company_domain: 'Website URL',
      company_name: 'Company Name',
      first_name: 'First Name',
      last_name: 'Last Name',
    });
  });

  it('Salesforce', () => {
    const header = [
      'Contact ID',
      'Salutation',
      'First Name',
      'Last Name',
      'Title',
      'Account Name',
      'Email',
      'Phone',
      'Mailing Country',
    ];
    expect(mapped('contacts', header)).toEqual({
      business_email: 'Email',
      company_name: 'Account Name',
      first_name: 'First Name',
      last_name: 'Last Name',
    });
  });

  it("a prospecting tool's export: the person's profile URL, not the company's", () => {
    const header = [
      'First Name',
      'Last Name',
      'Title',
      'Company',
      'Company Name for Emails',
      'Email',
      'Email Status',
      'Person Linkedin Url',
      'Website',
      'Company Linkedin Url',
    ];
    const samples = [
      [
        'Jane',
        'Doe',
        'VP',
        'Acme',
        'Acme',
        'jane@acme.com',
        'verified',
        'http://www.linkedin.com/in/janedoe',
        'http://www.acme.com',
        'http://www.linkedin.com/company/acme',
      ],
    ];
    expect(mapped('contacts', header, samples)).toEqual({
      business_email: 'Email',
      company_domain: 'Website',
      company_name: 'Company',
      first_name: 'First Name',
      last_name: 'Last Name',
      prof_network_url: 'Person Linkedin Url',
    });
  });

  it('camelCase scraper columns; a company-profile "companyUrl" is not a website', () => {
    const header = [
      'profileUrl',
      'fullName',
      'firstName',
      'lastName',
      'companyName',
      'title',
      'companyUrl',
    ];
    const samples = [
      [
        'https://pn.example/in/jane-doe',
        'Jane Doe',
        'Jane',
        'Doe',
        'Acme',
        'VP',
        'https://pn.example/company/acme',
      ],
    ];
    expect(mapped('contacts', header, samples)).toEqual({
      company_name: 'companyName',
      first_name: 'firstName',
      last_name: 'lastName',
      prof_network_url: 'profileUrl',
    });
  });

  it('Outlook and Google Contacts', () => {
    expect(
      mapped('contacts', [
        'First Name',
        'Middle Name',
        'Last Name',
        'Company',
        'E-mail Address',
        'E-mail 2 Address',
        'Web Page',
      ]),
    ).toEqual({
      business_email: 'E-mail Address',
      company_domain: 'Web Page',
      company_name: 'Company',
      first_name: 'First Name',
      last_name: 'Last Name',
    });
    expect(
      mapped('contacts', [
        'Name',
        'Given Name',
        'Family Name',
        'Organization 1 - Name',
        'E-mail 1 - Value',
        'Website 1 - Value',
      ]),
    ).toEqual({
      business_email: 'E-mail 1 - Value',
      company_domain: 'Website 1 - Value',
      company_name: 'Organization 1 - Name',
      first_name: 'Given Name',
      last_name: 'Family Name',
    });
  });

  it('a single "Name" column is split when there are no separate name columns (prefixes ignored)', () => {
    const m = detectMapping(
      'contacts',
      ['Person - Name', 'Person - Email', 'Person - Organization'],
      [],
    );
    expect(m.split).toEqual({ column: 0 });
    expect(mappingToJson(m, ['Person - Name', 'Person - Email', 'Person - Organization'])).toEqual({
      business_email: 'Person - Email',
      company_name: 'Person - Organization',
      first_name: 'Person - Name',
      last_name: 'Person - Name',
    });
  });

  it('prefers the work email over a generic one, and never takes a personal email', () => {
    expect(mapped('contacts', ['Email', 'Work Email'])).toEqual({ business_email: 'Work Email' });
    expect(mapped('contacts', ['Personal Email', 'Email'])).toEqual({ business_email: 'Email' });
  });

  it('a plain "URL" column goes where its values say', () => {
    expect(
      mapped('contacts', ['Name', 'URL'], [['Jane Doe', 'https://pn.example/in/jane']]),
    ).toMatchObject({ prof_network_url: 'URL' });
    expect(mapped('contacts', ['Email', 'URL'], [['jane@acme.com', 'https://acme.com']])).toEqual({
      business_email: 'Email',
      company_domain: 'URL',
    });
  });

  it('an unnamed column full of emails is found by its values', () => {
    expect(
      mapped(
        'contacts',
        ['Contact', 'Notes'],
        [
          ['jane@acme.com', 'x'],
          ['wei@umbrella.co', 'y'],
        ],
      ),
    ).toEqual({ business_email: 'Contact' });
  });
});

describe('detectMapping: whole header sets of CRM and prospecting exports', () => {
  // Each export's full header (as the tool writes it), and what it must map: every synonym to
  // one field, no tie between two columns of one export.
  it.each([
    [
      'Salesforce leads report',
      'contacts',
      'Lead ID,Salutation,First Name,Last Name,Title,Company / Account,Email,Phone,Mobile,Lead Source,Lead Status,Street,City,State/Province,Zip/Postal Code,Country,Website,Industry,Lead Owner,Rating,Created Date',
      {
        business_email: 'Email',
        company_domain: 'Website',
        company_name: 'Company / Account',
        first_name: 'First Name',
        last_name: 'Last Name',
      },
    ],
    [
      'Salesforce contacts report',
      'contacts',
      'Contact ID,Salutation,First Name,Last Name,Title,Account Name,Email,Phone,Mobile,Mailing Street,Mailing City,Mailing State/Province,Mailing Zip/Postal Code,Mailing Country,Lead Source,Contact Owner,Created Date',
      {
        business_email: 'Email',
        company_name: 'Account Name',
        first_name: 'First Name',
        last_name: 'Last Name',
      },
    ],
    [
      'Salesforce accounts report',
      'companies',
      'Account ID,Account Name,Type,Website,Phone,Industry,Billing Street,Billing City,Billing State/Province,Billing Zip/Postal Code,Billing Country,Annual Revenue,Employees,Account Owner',
      { company_name: 'Account Name', company_website: 'Website' },
    ],
    [
      'HubSpot contacts (associated company)',
      'contacts',
      'Record ID,First Name,Last Name,Email,Phone Number,Job Title,Associated Company,Associated Company IDs,Primary Associated Company ID,Contact owner,Lifecycle Stage,Lead Status,Create Date,Last Activity Date,Website URL,LinkedIn URL',
      {
        business_email: 'Email',
        company_domain: 'Website URL',
        company_name: 'Associated Company',
        first_name: 'First Name',
        last_name: 'Last Name',
        prof_network_url: 'LinkedIn URL',
      },
    ],
    [
      'HubSpot contacts (company name and associated company)',
      'contacts',
      'Record ID,First Name,Last Name,Email,Company Name,Associated Company,Website URL',
      {
        business_email: 'Email',
        company_domain: 'Website URL',
        company_name: 'Company Name',
        first_name: 'First Name',
        last_name: 'Last Name',
      },
    ],
    [
      'HubSpot companies',
      'companies',
      'Record ID,Company name,Company Domain Name,Website URL,Company owner,Create Date,Phone Number,Last Activity Date,City,Country/Region,Industry,Number of Employees,Annual Revenue,LinkedIn Company Page',
      { company_name: 'Company name', company_website: 'Company Domain Name' },
    ],
    [
      'Apollo contacts',
      'contacts',
      'First Name,Last Name,Title,Company,Company Name for Emails,Email,Email Status,Primary Email Source,Email Confidence,Seniority,Departments,Contact Owner,First Phone,Work Direct Phone,Home Phone,Mobile Phone,Corporate Phone,Other Phone,Stage,Lists,Last Contacted,Account Owner,# Employees,Industry,Keywords,Person Linkedin Url,Website,Company Linkedin Url,Facebook Url,Twitter Url,City,State,Country,Company Address,Company City,Company State,Company Country,Company Phone,SEO Description,Technologies,Annual Revenue,Total Funding,Latest Funding,Latest Funding Amount,Last Raised At,Apollo Contact Id,Apollo Account Id,Secondary Email,Tertiary Email',
      {
        business_email: 'Email',
        company_domain: 'Website',
        company_name: 'Company',
        first_name: 'First Name',
        last_name: 'Last Name',
        prof_network_url: 'Person Linkedin Url',
      },
    ],
    [
      'Apollo people (API field names)',
      'contacts',
      'id,first_name,last_name,name,linkedin_url,title,email,email_status,organization_id,organization_name,organization_website_url,organization_linkedin_url,city,state,country,seniority,departments',
      {
        business_email: 'email',
        company_domain: 'organization_website_url',
        company_name: 'organization_name',
        first_name: 'first_name',
        last_name: 'last_name',
        prof_network_url: 'linkedin_url',
      },
    ],
    [
      'Apollo people with the primary domain',
      'contacts',
      'first_name,last_name,email,organization_name,organization_website_url,organization_primary_domain',
      {
        business_email: 'email',
        company_domain: 'organization_primary_domain',
        company_name: 'organization_name',
        first_name: 'first_name',
        last_name: 'last_name',
      },
    ],
    [
      'Apollo accounts',
      'companies',
      'Company,Company Name for Emails,Account Stage,Lists,# Employees,Industry,Account Owner,Website,Company Linkedin Url,Facebook Url,Twitter Url,Company Street,Company City,Company State,Company Country,Company Postal Code,Company Address,Keywords,Company Phone,SEO Description,Technologies,Total Funding,Annual Revenue,Apollo Account Id',
      { company_name: 'Company', company_website: 'Website' },
    ],
    [
      'ZoomInfo contacts',
      'contacts',
      'ZoomInfo Contact ID,Last Name,First Name,Middle Name,Salutation,Suffix,Job Title,Management Level,Job Function,Department,Company Division Name,Direct Phone Number,Email Address,Email Domain,Mobile phone,Previous Job Title,Previous Company Name,Contact Accuracy Score,ZoomInfo Contact Profile URL,LinkedIn Contact Profile URL,Person City,Person State,Country,ZoomInfo Company ID,Company Name,Company Description,Website,Founded Year,Company HQ Phone,Employees,Primary Industry,Company City,Company Country,ZoomInfo Company Profile URL,LinkedIn Company Profile URL,Supplemental Email',
      {
        business_email: 'Email Address',
        company_domain: 'Email Domain',
        company_name: 'Company Name',
        first_name: 'First Name',
        last_name: 'Last Name',
        prof_network_url: 'LinkedIn Contact Profile URL',
      },
    ],
    [
      'ZoomInfo companies',
      'companies',
      'ZoomInfo Company ID,Company Name,Website,Founded Year,Company HQ Phone,Revenue (in 000s USD),Employees,Primary Industry,Company Street Address,Company City,Company State,Company Zip Code,Company Country,ZoomInfo Company Profile URL,LinkedIn Company Profile URL',
      { company_name: 'Company Name', company_website: 'Website' },
    ],
    [
      'Pipedrive people',
      'contacts',
      'Person - ID,Person - Name,Person - First name,Person - Last name,Person - Label,Person - Organization,Person - Email - Work,Person - Email - Home,Person - Email - Other,Person - Phone - Work,Person - Phone - Mobile,Person - Owner,Person - Job title,Person - LinkedIn profile',
      {
        business_email: 'Person - Email - Work',
        company_name: 'Person - Organization',
        first_name: 'Person - First name',
        last_name: 'Person - Last name',
        prof_network_url: 'Person - LinkedIn profile',
      },
    ],
    [
      'Pipedrive organizations',
      'companies',
      'Organization - ID,Organization - Name,Organization - Owner,Organization - Address,Organization - Website,Organization - LinkedIn profile,Organization - Industry,Organization - Number of employees',
      { company_name: 'Organization - Name', company_website: 'Organization - Website' },
    ],
    [
      'Sales Navigator (Evaboot)',
      'contacts',
      'Sales Navigator URL,LinkedIn URL,First Name,Last Name,Email,Email Status,Job Title,Company Name,Company Domain,Company Website,Company LinkedIn URL,Company Sales Navigator URL,Location,Industry',
      {
        business_email: 'Email',
        company_domain: 'Company Domain',
        company_name: 'Company Name',
        first_name: 'First Name',
        last_name: 'Last Name',
        prof_network_url: 'LinkedIn URL',
      },
    ],
    [
      'LinkedIn connections',
      'contacts',
      'First Name,Last Name,URL,Email Address,Company,Position,Connected On',
      {
        business_email: 'Email Address',
        company_domain: 'URL',
        company_name: 'Company',
        first_name: 'First Name',
        last_name: 'Last Name',
      },
    ],
    // Japanese exports (regression: 姓, 名, 会社名, メールアドレス read right but not mapped).
    [
      'Sansan (business cards, Japanese)',
      'contacts',
      '名刺交換日,会社名,部署名,役職,姓,名,姓（読み）,名（読み）,E-mail,郵便番号,住所,TEL,FAX,携帯電話,URL',
      {
        business_email: 'E-mail',
        company_domain: 'URL',
        company_name: '会社名',
        first_name: '名',
        last_name: '姓',
      },
    ],
    [
      'Salesforce leads report (Japanese)',
      'contacts',
      '姓,名,会社名,役職,メール,電話,携帯,Web サイト,リードソース,リード状況,都道府県,市区郡,町名・番地,郵便番号,国',
      {
        business_email: 'メール',
        company_domain: 'Web サイト',
        company_name: '会社名',
        first_name: '名',
        last_name: '姓',
      },
    ],
    [
      'Salesforce contacts report (Japanese)',
      'contacts',
      '取引先名,姓,名,役職,メール,電話,携帯,部署',
      { business_email: 'メール', company_name: '取引先名', first_name: '名', last_name: '姓' },
    ],
    [
      'HubSpot contacts (Japanese)',
      'contacts',
      'レコードID,名,姓,Eメール,電話番号,会社名,ウェブサイトURL,ライフサイクルステージ,コンタクト担当者,作成日',
      {
        business_email: 'Eメール',
        company_domain: 'ウェブサイトURL',
        company_name: '会社名',
        first_name: '名',
        last_name: '姓',
      },
    ],
    [
      'an Excel list in Japanese: full-width and half-width forms; 氏名 (family name first) is not split',
      'contacts',
      'ＮＯ,氏名,姓,名,会社名,ﾒｰﾙｱﾄﾞﾚｽ,電話番号,役職',
      { business_email: 'ﾒｰﾙｱﾄﾞﾚｽ', company_name: '会社名', first_name: '名', last_name: '姓' },
    ],
    [
      'HubSpot companies (Japanese)',
      'companies',
      'レコードID,会社名,会社のドメイン名,ウェブサイトURL,業種,従業員数,電話番号',
      { company_name: '会社名', company_website: '会社のドメイン名' },
    ],
    [
      'Salesforce accounts report (Japanese)',
      'companies',
      '取引先名,種別,Web サイト,電話,業種,従業員数',
      { company_name: '取引先名', company_website: 'Web サイト' },
    ],
  ] as const)('%s', (_name, kind, header, expected) => {
    expect(mapped(kind, header.split(','))).toEqual(expected);
  });

  it('Sales Navigator (PhantomBuster): its "companyUrl" of /sales/company/ pages is no website', () => {
    const header =
      'profileUrl,fullName,firstName,lastName,companyName,title,companyId,companyUrl,regularCompanyUrl,linkedInProfileUrl'.split(
        ',',
      );
    const row = [
      'https://www.linkedin.com/sales/lead/ACwAAA123,NAME_SEARCH,abcd',
      'Jane Doe',
      'Jane',
      'Doe',
      'Acme',
      'CEO',
      '1234',
      'https://www.linkedin.com/sales/company/1234',
      'https://www.linkedin.com/company/1234',
      'https://www.linkedin.com/in/janedoe',
    ];
    expect(mapped('contacts', header, [row, row])).toEqual({
      company_name: 'companyName',
      first_name: 'firstName',
      last_name: 'lastName',
      prof_network_url: 'linkedInProfileUrl',
    });
  });
});

describe('detectMapping: Japanese headers', () => {
  it('a whole name (氏名, 名前) is never split, nor is a reading taken for a name', () => {
    // Family name first and often unspaced: "田中 太郎" split as a Western name sends the names swapped.
    expect(mapped('contacts', ['氏名', '会社名', 'メールアドレス'])).toEqual({
      business_email: 'メールアドレス',
      company_name: '会社名',
    });
    expect(mapped('contacts', ['名前', 'セイ', 'メイ', '会社', 'Ｅメール'])).toEqual({
      business_email: 'Ｅメール',
      company_name: '会社',
    });
  });

  it('voiced kana are kept apart from their plain letters (ド is not ト), whatever the width', () => {
    expect(mapped('contacts', ['Email', 'ﾄﾞﾒｲﾝ'])).toMatchObject({ company_domain: 'ﾄﾞﾒｲﾝ' });
    expect(mapped('contacts', ['Email', 'トメイン'])).not.toHaveProperty('company_domain');
  });
});

describe('detectMapping: companies', () => {
  it.each([
    [
      ['Account Name', 'Website', 'Industry'],
      { company_name: 'Account Name', company_website: 'Website' },
    ],
    [['Company', 'Domain', 'Employees'], { company_name: 'Company', company_website: 'Domain' }],
    [['name', 'url'], { company_name: 'name', company_website: 'url' }],
    [
      ['Company Name', 'Company Linkedin Url', 'Website URL'],
      { company_name: 'Company Name', company_website: 'Website URL' },
    ],
    // HubSpot's "Company Domain Name" and CRM account/organization labels.
    [
      ['Company name', 'Company Domain Name'],
      { company_name: 'Company name', company_website: 'Company Domain Name' },
    ],
    [
      ['Organization', 'Organization Domain'],
      { company_name: 'Organization', company_website: 'Organization Domain' },
    ],
    [
      ['Account', 'Account Website'],
      { company_name: 'Account', company_website: 'Account Website' },
    ],
    // German, French, Spanish, Italian and Dutch exports.
    [['Firma', 'Webseite'], { company_name: 'Firma', company_website: 'Webseite' }],
    [
      ["Nom de l'entreprise", 'Site web'],
      { company_name: "Nom de l'entreprise", company_website: 'Site web' },
    ],
    [['Société', 'Site Internet'], { company_name: 'Société', company_website: 'Site Internet' }],
    [['Empresa', 'Sitio web'], { company_name: 'Empresa', company_website: 'Sitio web' }],
    [['Azienda', 'Sito web'], { company_name: 'Azienda', company_website: 'Sito web' }],
    [['Bedrijfsnaam', 'Website'], { company_name: 'Bedrijfsnaam', company_website: 'Website' }],
  ])('%j', (header, expected) => {
    expect(mapped('companies', header, [])).toEqual(expected);
  });

  it.each([
    [['Email', 'Firma', 'Webseite'], { company_name: 'Firma', company_domain: 'Webseite' }],
    [['E-Mail-Adresse', 'Vorname'], { business_email: 'E-Mail-Adresse', first_name: 'Vorname' }],
    [
      ['E-mail', 'Empresa', 'Organization Domain'],
      { company_name: 'Empresa', company_domain: 'Organization Domain' },
    ],
    [
      ['Prénom', 'Nom', 'Société', 'Courriel'],
      {
        first_name: 'Prénom',
        last_name: 'Nom',
        company_name: 'Société',
        business_email: 'Courriel',
      },
    ],
  ])('contacts with a foreign company column: %j', (header, expected) => {
    expect(mapped('contacts', header, [])).toMatchObject(expected);
  });
});

describe('detectMapping: ambiguity, overrides, failures', () => {
  it('duplicate columns are ambiguous: a usage error lists them and the --map to use', () => {
    const header = ['Email', 'Name', 'Email (2)'];
    const rows = [['a@b.co', 'Jane Doe', 'c@d.co']];
    const err = failure(() => detectMapping('contacts', header, rows, {}, { words: CLI_WORDS }));
    expect(err.code).toBe('MAPPING_AMBIGUOUS');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('"Email", "Email (2)"');
    expect(err.hint).toContain('--map business_email="Email"');
    // A library caller is told about its option, never about a flag.
    const lib = failure(() => detectMapping('contacts', header, rows));
    expect(lib.hint).toContain('map: { business_email: "Email" }');
    expect(lib.hint).not.toContain('--');
  });

  it('duplicate "Name" columns do not matter when there are first and last name columns', () => {
    expect(mapped('contacts', ['Name', 'First Name', 'Last Name', 'Email', 'Name'])).toEqual({
      business_email: 'Email',
      first_name: 'First Name',
      last_name: 'Last Name',
    });
  });

  it('values break a tie: the empty duplicate loses', () => {
    expect(mapped('contacts', ['Email', 'Email (2)'], [['', 'jane@acme.com']])).toEqual({
      business_email: 'Email (2)',
    });
  });

  it('--map overrides detection, `field=` unmaps, first_name=last_name=one column splits it', () => {
    const header = ['Email', 'Work Email', 'Full Name', 'Company'];
    expect(mapped('contacts', header, [], { business_email: 'email' })).toEqual({
      business_email: 'Email',
      company_name: 'Company',
      first_name: 'Full Name',
      last_name: 'Full Name',
    });
    expect(mapped('contacts', header, [], { company_name: '' })).toEqual({
      business_email: 'Work Email',
      first_name: 'Full Name',
      last_name: 'Full Name',
    });
    expect(
      detectMapping('contacts', header, [], { first_name: 'Full Name', last_name: 'Full Name' })
        .split,
    ).toEqual({ column: 2 });
    expect(detectMapping('contacts', header, [], { full_name: 'Full Name' }).split).toEqual({
      column: 2,
    });
  });

  it('a --map naming a missing column or an unknown field is MAPPING_INVALID', () => {
    const missing = failure(() =>
      detectMapping('contacts', ['Email'], [], { business_email: 'Mail' }),
    );
    expect(missing.code).toBe('MAPPING_INVALID');
    expect(missing.message).toContain('"Mail"');
    expect(missing.message).toContain('"Email"');
    expect(
      failure(() => detectMapping('companies', ['Name'], [], { business_email: 'Name' })).message,
    ).toMatch(/unknown field "business_email" for companies/);
  });

  it('a mapping that can never satisfy the API rules fails before anything is read', () => {
    const err = failure(() => detectMapping('contacts', ['First Name', 'Title'], []));
    expect(err.code).toBe('MAPPING_INVALID');
    expect(err.message).toMatch(/mapped: first_name.*needs at least one of/);
    expect(failure(() => detectMapping('companies', ['Industry'], [])).message).toMatch(
      /no column was recognised/,
    );
  });

  it('with auto off (a --mapping file) only the given fields are mapped', () => {
    expect(
      mappingToJson(
        detectMapping(
          'contacts',
          ['Email', 'First Name'],
          [],
          { business_email: 'Email' },
          { auto: false },
        ),
        ['Email', 'First Name'],
      ),
    ).toEqual({ business_email: 'Email' });
  });
});

describe('mapping files across Unicode forms', () => {
  it('a mapping naming "Société" (NFC, as Windows writes it) finds the column of a Mac export (NFD), named as read', () => {
    // Regression: MAPPING_INVALID, listing "Société" among the columns the input has.
    const nfd = ['E-mail', 'Pr\u0065\u0301nom', 'Nom', 'Soci\u0065\u0301t\u0065\u0301'];
    const saved = {
      business_email: 'E-mail',
      first_name: 'Pr\u00e9nom',
      company_name: 'Soci\u00e9t\u00e9',
    };
    const mapping = detectMapping('contacts', nfd, [], saved, { auto: false });
    expect(mapping.fields).toEqual({ business_email: 0, first_name: 1, company_name: 3 });
    expect(mappingToJson(mapping, nfd).company_name).toBe(nfd[3]);
    // and the other way round; a name that only looks alike is no match
    const nfc = nfd.map((h) => h.normalize('NFC'));
    const back = { company_name: nfd[3]!, business_email: 'E-mail' };
    expect(detectMapping('contacts', nfc, [], back, { auto: false }).fields.company_name).toBe(3);
    expect(
      failure(() =>
        detectMapping(
          'contacts',
          nfd,
          [],
          { business_email: 'E-mail', company_name: 'Societe' },
          { auto: false },
        ),
      ).code,
    ).toBe('MAPPING_INVALID');
  });
});

describe('mapping files', () => {
  it('save then load gives the same mapping; a changed header fails loudly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-map-'));
    try {
      const header = ['Email', 'Name', 'Company'];
      const file = join(dir, 'map.json');
      await saveMapping(file, 'contacts', detectMapping('contacts', header, []), header);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        business_email: 'Email',
        company_name: 'Company',
        first_name: 'Name',
        last_name: 'Name',
      });
      const loaded = await loadMapping(file);
      expect(
        mappingToJson(detectMapping('contacts', header, [], loaded, { auto: false }), header),
      ).toEqual(loaded);
      expect(
        failure(() =>
          detectMapping('contacts', ['E-mail', 'Name', 'Company'], [], loaded, { auto: false }),
        ).code,
      ).toBe('MAPPING_INVALID');
      await writeFile(file, '["Email"]');
      await expect(loadMapping(file)).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
      await expect(loadMapping(join(dir, 'none.json'))).rejects.toThrow(/no such file/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
