// "The obvious alternative" to the bulk path: what a hand-written script does, one
// POST /contact per row, awaited in turn, output written as rows come back.
// Usage: ENRICH_BASE_URL=... ENRICH_API_KEY=... node bench/single-loop.js in.csv out.csv
import { createReadStream, createWriteStream } from 'node:fs';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { fetch } from 'undici';

const [input, output] = process.argv.slice(2);
const base = process.env.ENRICH_BASE_URL;
const headers = {
  authorization: `Bearer ${process.env.ENRICH_API_KEY}`,
  'content-type': 'application/json',
};
const out = stringify();
out.pipe(createWriteStream(output));
let header;
let failed = 0;
for await (const cells of createReadStream(input).pipe(parse())) {
  if (!header) {
    header = cells;
    out.write([...cells, 'enriched_email', 'enriched_title', 'error']);
    continue;
  }
  const res = await fetch(`${base}/contact`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ business_email: cells[3] }),
  });
  const body = await res.json();
  if (res.status !== 200) failed++;
  const c = body.contact ?? {};
  out.write([...cells, c.business_email ?? '', c.job_title ?? '', body.message ?? '']);
}
out.end();
if (failed) process.stderr.write(`${failed} requests failed\n`);
