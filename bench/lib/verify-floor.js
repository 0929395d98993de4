// The floor of `bench:verify`: N POST /email-verification with C in flight, from a bare undici
// Pool (no journal, no file, no retries), against the same sandbox. What the CLI run takes
// beyond this is the tool's own; what this takes beyond N x latency / C is the machine's and
// the sandbox's. Usage: node verify-floor.js <base_url> <api_key> <n> <concurrency>
import { Pool } from 'undici';

const [baseUrl, apiKey, n, c] = process.argv.slice(2);
const total = Number(n);
const pool = new Pool(baseUrl, { connections: Number(c) });
let next = 0;
await Promise.all(
  Array.from({ length: Number(c) }, async () => {
    while (next < total) {
      const i = next++;
      const r = await pool.request({
        path: '/email-verification',
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `floor${i}@floor${i % 97}.com` }),
      });
      await r.body.json();
    }
  }),
);
await pool.close();
