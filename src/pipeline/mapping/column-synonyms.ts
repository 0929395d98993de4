import type { BulkKind } from './mapping-types.js';

/** Combining marks but the kana voicing marks (゛ ゜), which make another letter: ト and ド differ. */
const MARKS = /[^\P{M}\u3099\u309a]+/gu;

/**
 * A header name with case, accents, width, spaces and punctuation removed: "E-mail Address" ->
 * "emailaddress", "Prénom" -> "prenom"; full-width "Ｅメール" and half-width "ﾒｰﾙ" as their usual
 * forms, "メール アドレス" (a full-width space too) -> "メールアドレス". Kana keep their voicing
 * (NFKD, marks dropped, then NFC): ド is not ト.
 */
export function squash(name: string): string {
  return name
    .normalize('NFKD')
    .replace(MARKS, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

// Words some exports put before every column ("Contact Email", "Person Linkedin Url").
const PREFIXES = [
  'contact',
  'person',
  'lead',
  'prospect',
  'primary',
  'customer',
  'member',
  'user',
  'my',
];

// Header synonyms seen in real exports (CRMs, spreadsheets, prospecting tools), squashed, with a
// strength: 5 = says exactly this field, 4 = the usual generic name, 2 = only a hint (values decide).
type Table = Record<string, Record<string, number>>;

// Company and website headers of German, French, Spanish, Portuguese, Italian and Dutch
// exports ("Firma", "Nom de l'entreprise", "Sitio web"), squashed.
const FOREIGN_COMPANY = [
  'firma',
  'firmenname',
  'unternehmen',
  'unternehmensname',
  'entreprise',
  'nomdelentreprise',
  'societe',
  'empresa',
  'nombredelaempresa',
  'nomedaempresa',
  'azienda',
  'nomeazienda',
  'ragionesociale',
  'bedrijf',
  'bedrijfsnaam',
];
// A company's domain or website as CRMs name it: HubSpot's "Company Domain Name", and
// "account"/"organization" variants.
const CRM_DOMAIN = [
  'companydomainname',
  'websitedomain',
  'organizationdomain',
  'organisationdomain',
  'accountdomain',
  'primarydomain',
  // Apollo's people/organization exports.
  'organizationprimarydomain',
];
const CRM_WEBSITE = [
  'accountwebsite',
  'organizationwebsite',
  'organisationwebsite',
  // Apollo's people/organization exports ("organization_website_url").
  'organizationwebsiteurl',
];
const FOREIGN_WEBSITE = [
  'webseite',
  'internetseite',
  'homepageurl',
  'siteweb',
  'siteinternet',
  'sitioweb',
  'paginaweb',
  'sitoweb',
  'dominio',
  'domaine',
];
// Japanese exports (Sansan, Eight, Salesforce and HubSpot in Japanese, Excel lists): written
// as the tools write them, squashed by `s`. A person's whole name (氏名, 名前) is left out: it is
// written family name first, often without a space, so splitting it would swap the names sent;
// readings (セイ, 姓（カナ）) are not the name as written; phone, title and department have no
// input field.
const JA_EMAIL = [
  'メール',
  'メールアドレス',
  'Eメール',
  'Eメールアドレス',
  '電子メール',
  '電子メールアドレス',
];
const JA_COMPANY = ['会社名', '会社', '企業名', '法人名', '社名', '取引先名', '組織名', '勤務先'];
const JA_DOMAIN = ['ドメイン', '会社のドメイン名'];
const JA_WEBSITE = ['ウェブサイト', 'Webサイト', 'ホームページ', '会社URL'];
const JA_WEBSITE_URL = ['ウェブサイトURL', 'WebサイトURL', 'ホームページURL'];

/** Names at one strength, squashed (the Japanese ones are written as exports write them). */
const s = (strength: number, ...names: string[]) =>
  Object.fromEntries(names.map((n) => [squash(n), strength]));

const CONTACTS: Table = {
  business_email: {
    ...s(
      5,
      'businessemail',
      'workemail',
      'professionalemail',
      'companyemail',
      'corporateemail',
      'officeemail',
      'emailwork',
      'emailbusiness',
      'businessemailaddress',
      'workemailaddress',
    ),
    ...s(
      4,
      'email',
      'emailaddress',
      'mail',
      'email1',
      'email1value',
      'primaryemail',
      'emailid',
      'emails',
      // German, French, Spanish, Portuguese, Italian, Dutch.
      'emailadresse',
      'mailadresse',
      'courriel',
      'adresseemail',
      'adressemail',
      'correo',
      'correoelectronico',
      'enderecodeemail',
      'indirizzoemail',
      ...JA_EMAIL,
    ),
  },
  first_name: s(
    5,
    'firstname',
    'givenname',
    'fname',
    'forename',
    'first',
    'prenom',
    'vorname',
    'nombre',
    // Japanese: the given name beside 姓.
    '名',
    '下の名前',
    'ファーストネーム',
  ),
  last_name: s(
    5,
    'lastname',
    'surname',
    'familyname',
    'lname',
    'last',
    'nom',
    'nachname',
    'apellido',
    '姓',
    '名字',
    '苗字',
    'ラストネーム',
  ),
  company_name: {
    ...s(
      5,
      'companyname',
      'company',
      'organization',
      'organisation',
      'organizationname',
      'organisationname',
      'accountname',
      'employer',
      'employername',
      'currentcompany',
      'currentemployer',
      'businessname',
      // Salesforce's lead reports ("Company / Account").
      'companyaccount',
      ...JA_COMPANY,
    ),
    ...s(
      4,
      '取引先',
      'account',
      'org',
      'orgname',
      'firm',
      'organization1name',
      // HubSpot's contact exports: the primary associated company's name. Below 5, so a
      // "Company Name" column beside it (a property of the contact) is taken without a tie.
      'associatedcompany',
      ...FOREIGN_COMPANY,
    ),
  },
  company_domain: {
    ...s(5, 'companydomain', 'domain', 'emaildomain', ...CRM_DOMAIN, ...JA_DOMAIN),
    ...s(
      4,
      'website',
      'websiteurl',
      'companywebsite',
      'companyurl',
      'companywebsiteurl',
      'web',
      'homepage',
      'site',
      'webaddress',
      'webpage',
      'website1value',
      ...CRM_WEBSITE,
      ...FOREIGN_WEBSITE,
      ...JA_WEBSITE,
      ...JA_WEBSITE_URL,
    ),
    ...s(2, 'url'),
  },
  prof_network_url: {
    ...s(
      5,
      'profnetworkurl',
      'profnetwork',
      'linkedinurl',
      'linkedin',
      'linkedinprofile',
      'linkedinprofileurl',
      'personlinkedinurl',
      'linkedinlink',
      'profileurl',
      'publicprofileurl',
      'socialprofileurl',
      'liurl',
      'linkedincontactprofileurl',
      'personallinkedin',
    ),
    ...s(4, 'profile', 'profilelink'),
    ...s(2, 'url'),
  },
};

const COMPANIES: Table = {
  company_name: {
    ...s(
      5,
      'companyname',
      'company',
      'name',
      'organization',
      'organisation',
      'organizationname',
      'accountname',
      'businessname',
      'legalname',
      'companyaccount',
      ...JA_COMPANY,
    ),
    ...s(4, '取引先', 'account', 'org', 'orgname', 'firm', 'employer', ...FOREIGN_COMPANY),
  },
  company_website: {
    ...s(
      5,
      'website',
      'companywebsite',
      'domain',
      'companydomain',
      'companyurl',
      'homepage',
      'companywebsiteurl',
      ...CRM_DOMAIN,
      ...CRM_WEBSITE,
      ...JA_DOMAIN,
      ...JA_WEBSITE,
    ),
    ...s(
      4,
      ...JA_WEBSITE_URL,
      // Below 5: HubSpot's company exports also have "Company Domain Name" (its key, always
      // filled), which is taken without a tie.
      'websiteurl',
      'web',
      'webpage',
      'site',
      'webaddress',
      'domainname',
      'website1value',
      ...FOREIGN_WEBSITE,
    ),
    ...s(2, 'url'),
  },
};

// A single column holding a person's whole name, split into first and last name.
const FULL_NAME = s(
  5,
  'name',
  'fullname',
  'contactname',
  'personname',
  'leadname',
  'contactfullname',
);

/** How strongly a header names each field (0 when it does not), prefixes stripped at a small cost. */
export function nameStrength(kind: BulkKind, field: string, header: string): number {
  const table =
    field === 'full_name' ? FULL_NAME : (kind === 'contacts' ? CONTACTS : COMPANIES)[field];
  if (!table) return 0;
  const n = squash(header);
  if (table[n]) return table[n];
  for (const p of PREFIXES) {
    if (n.startsWith(p) && table[n.slice(p.length)]) return table[n.slice(p.length)]! - 1;
  }
  return 0;
}
