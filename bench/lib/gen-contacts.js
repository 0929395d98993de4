// Deterministic contact CSV generator for the benchmarks: 12 columns, some quoted fields with
// commas (company names, notes), some non-ASCII names, about 1% duplicate people.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const FIRST = [
  'Anna',
  'José',
  'Zoë',
  'Björn',
  'Mei',
  'Łukasz',
  'Olivia',
  'Noah',
  'Chloé',
  'Søren',
  'Ahmed',
  'Priya',
  '王',
  'Иван',
  'Fatima',
  'Liam',
];
const LAST = [
  'Smith',
  'Müller',
  "O'Brien",
  'García',
  'Nguyen',
  'Kowalski',
  'Dubois',
  'Rossi',
  'Øvergård',
  '李',
  'Petrov',
  'Patel',
  'Johnson',
  'Brown',
];
const COMPANY = [
  'Acme, Inc.',
  'Globex',
  'Initech',
  'Umbrella Corp',
  'Stark Industries',
  'Wayne Enterprises',
  'Hooli, LLC',
  'Vandelay Industries',
  'Soylent',
  'Cyberdyne Systems',
];
const TITLE = [
  'CEO',
  'CTO',
  'VP Sales',
  'Head of Marketing',
  'Engineer',
  'Account Executive',
  'Director, Operations',
];
const CITY = ['Paris', 'Berlin', 'New York', 'São Paulo', 'Tokyo', 'Zürich', 'London', 'Kraków'];
const COUNTRY = ['FR', 'DE', 'US', 'BR', 'JP', 'CH', 'GB', 'PL'];

export const HEADER = [
  'Contact ID',
  'First Name',
  'Last Name',
  'Email',
  'Company',
  'Website',
  'Job Title',
  'Phone',
  'City',
  'Country',
  'LinkedIn',
  'Notes',
];

function quote(s) {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Returns the CSV line (no line break) of row i: the same i always gives the same line. */
export function contactLine(i) {
  // 1% of rows repeat an earlier person (dedupe has something to do).
  const p = i % 100 === 99 ? i - 50 : i;
  const first = FIRST[p % FIRST.length];
  const last = LAST[(p * 7) % LAST.length];
  const co = (p * 13) % 5000;
  const company = `${COMPANY[co % COMPANY.length]}${co >= COMPANY.length ? ` ${co}` : ''}`;
  const domain = `company${co}.com`;
  const email = `${
    first
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z]/g, '') || 'x'
  }.p${p}@${domain}`;
  const cells = [
    `C${String(i).padStart(8, '0')}`,
    first,
    last,
    email,
    company,
    `https://www.${domain}`,
    TITLE[p % TITLE.length],
    `+1 555 ${String(p % 10000).padStart(4, '0')}`,
    CITY[p % CITY.length],
    COUNTRY[p % COUNTRY.length],
    p % 3 === 0 ? `https://www.linkedin.com/in/p${p}` : '',
    p % 5 === 0 ? `met at expo, follow up "soon"` : 'n/a',
  ];
  return cells.map(quote).join(',');
}

/** Writes a contacts CSV of `rows` data rows to `path`. */
export async function writeContacts(path, rows) {
  const out = createWriteStream(path);
  out.write(`${HEADER.join(',')}\n`);
  let buf = '';
  for (let i = 0; i < rows; i++) {
    buf += `${contactLine(i)}\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}
