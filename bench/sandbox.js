// Sandbox benchmark: (a) bulk records generated per second in-process, (b) single /contact
// requests per second over keep-alive (undici Pool, 4 connections, loopback).
// Run after `npm run build`: `node bench/sandbox.js [--quick]`; prints one JSON object.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { generateCompanies, generateContacts, startSandbox } from '../dist/sandbox/index.js';

function contactInputs(n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] =
      i % 2 === 0
        ? {
            first_name: `First${i}`,
            last_name: `Last${i}`,
            company_domain: `company${i % 5000}.com`,
            custom_fields: { row: i },
          }
        : { business_email: `person${i}@company${i % 5000}.com`, custom_fields: { row: i } };
  }
  return out;
}

function companyInputs(n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++)
    out[i] = { company_website: `https://www.company${i}.com`, custom_fields: { row: i } };
  return out;
}

function perSecond(count, fn) {
  const t0 = performance.now();
  fn();
  const ms = performance.now() - t0;
  return { records: count, ms: Math.round(ms), per_second: Math.round((count * 1000) / ms) };
}

async function singleContactRps(seconds) {
  const sb = await startSandbox({ port: 0, host: '127.0.0.1' });
  const pool = new Pool(sb.url, { connections: 4, pipelining: 1 });
  const headers = { authorization: `Bearer ${sb.apiKey}`, 'content-type': 'application/json' };
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const worker = async (w) => {
    let i = 0;
    while (performance.now() < deadline) {
      const body = JSON.stringify({ business_email: `user${w}-${i++}@acme.com` });
      const res = await pool.request({ path: '/contact', method: 'POST', headers, body });
      await res.body.text();
      if (res.statusCode === 200) done++;
      else failed++;
    }
  };
  const t0 = performance.now();
  await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(worker));
  const ms = performance.now() - t0;
  await pool.close();
  await sb.close();
  return { requests: done, failed, ms: Math.round(ms), per_second: Math.round((done * 1000) / ms) };
}

/** Runs the sandbox benchmark; `quick` uses smaller sizes (for smoke runs). */
export async function benchSandbox({ quick = false } = {}) {
  const n = quick ? 20_000 : 200_000;
  const contacts = contactInputs(n);
  const companies = companyInputs(n);
  // Warm up the JIT so the numbers measure steady state.
  generateContacts(contacts.slice(0, 5000));
  generateCompanies(companies.slice(0, 5000));
  return {
    node: process.version,
    bulk_contacts: perSecond(n, () => generateContacts(contacts)),
    bulk_companies: perSecond(n, () => generateCompanies(companies)),
    single_contact_http: await singleContactRps(quick ? 1 : 5),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchSandbox({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
