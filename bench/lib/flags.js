// The flags of bench/run.js. Unknown flags and bad numbers stop it at once: a typo must not
// start the full 15-minute run with the defaults.
const VALUE_FLAGS = [
  '--runs',
  '--sizes',
  '--single-rows',
  '--before',
  '--memory-limit',
  '--service-record-ms',
];
const SWITCHES = ['--quick', '--no-build'];

const count = (flag, text) => {
  if (!/^[1-9]\d*$/.test(text))
    throw new Error(`${flag}: expected a whole number >= 1, got "${text}"`);
  return Number(text);
};

const whole = (flag, text) => {
  if (!/^\d+$/.test(text)) throw new Error(`${flag}: expected a whole number >= 0, got "${text}"`);
  return Number(text);
};

/**
 * Parses bench/run.js's arguments into {quick, build, runs, sizes, singleRows, beforeDir,
 * memoryLimitMb, serviceRecordMs}.
 */
export function parseBenchFlags(argv) {
  const given = new Map();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (SWITCHES.includes(flag)) given.set(flag, true);
    else if (VALUE_FLAGS.includes(flag)) {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      given.set(flag, argv[++i]);
    } else {
      throw new Error(
        `unknown argument "${flag}" (flags: ${[...SWITCHES, ...VALUE_FLAGS].join(', ')})`,
      );
    }
  }
  const quick = given.has('--quick');
  const sizes = given.get('--sizes') ?? (quick ? '10000,50000' : '100000,1000000');
  return {
    quick,
    // --no-build: measure dist/ as it is (the test suite's smoke run: npm test built it already).
    build: !given.has('--no-build'),
    runs: count('--runs', given.get('--runs') ?? (quick ? '1' : '3')),
    sizes: sizes.split(',').map((s) => count('--sizes', s.trim())),
    singleRows: count('--single-rows', given.get('--single-rows') ?? (quick ? '1000' : '10000')),
    // `--before <dir>`: a built checkout of an older version, run on the smallest size too,
    // interleaved with the current one, for before/after numbers under the same load.
    beforeDir: given.get('--before'),
    // The results cache's section at the largest size (0 skips a part): cold and warm inside
    // a memory limit of N MB (opt-in: at 1M rows a 200 MB limit, page cache included, made a
    // cold run take over half an hour), and against a service whose jobs take N ms a record.
    memoryLimitMb: whole('--memory-limit', given.get('--memory-limit') ?? '0'),
    serviceRecordMs: whole('--service-record-ms', given.get('--service-record-ms') ?? '5'),
  };
}
