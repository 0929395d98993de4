// The baseline of the throughput benchmark: a plain streaming csv-parse -> csv-stringify copy
// of the same file (what any CSV tool must at least do). Usage: node bench/baseline-copy.js in out
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';

const [input, output] = process.argv.slice(2);
await pipeline(createReadStream(input), parse(), stringify(), createWriteStream(output));
