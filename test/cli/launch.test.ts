import { describe, expect, it } from 'vitest';
import { runsInWorker } from '../../src/cli/launch.js';

const argv = (...args: string[]) => ['/usr/bin/node', '/x/bin/enrich.js', ...args];

describe('which runs start in a worker thread (Node 24 young generation)', () => {
  it('a bulk command on Node 24 or later, not on Node 20', () => {
    for (const cmd of ['contacts', 'companies', 'verify-emails']) {
      expect(runsInWorker(argv(cmd, 'in.csv', '-o', 'out.csv'), {}, 24, [])).toBe(true);
      expect(runsInWorker(argv(cmd, 'in.csv'), {}, 25, [])).toBe(true);
      expect(runsInWorker(argv(cmd, 'in.csv'), {}, 20, [])).toBe(false);
      expect(runsInWorker(argv(cmd, 'in.csv'), {}, 23, [])).toBe(false);
    }
    // Global options may come first.
    expect(runsInWorker(argv('--profile', 'eu', 'contacts', 'in.csv'), {}, 24, [])).toBe(true);
  });

  it('never for another command, or for help and version (start-up stays as it was)', () => {
    for (const args of [
      ['jobs', 'list'],
      ['contact', '--email', 'a@b.co'],
      ['verify-email', 'a@b.co'],
      ['cache', 'stats'],
      ['contacts', '--help'],
      ['contacts', '-h'],
      ['--version'],
      ['-V'],
      [],
    ])
      expect(runsInWorker(argv(...args), {}, 24, [])).toBe(false);
  });

  it('ENRICH_WORKER=1 asks for it on any version, =0 never; a size the user set keeps the main thread', () => {
    expect(runsInWorker(argv('contacts', 'x'), { ENRICH_WORKER: '1' }, 20, [])).toBe(true);
    expect(runsInWorker(argv('contacts', 'x'), { ENRICH_WORKER: '0' }, 24, [])).toBe(false);
    expect(runsInWorker(argv('contacts', '--help'), { ENRICH_WORKER: '1' }, 20, [])).toBe(false);
    const sized = { NODE_OPTIONS: '--trace-warnings --max-semi-space-size=16' };
    expect(runsInWorker(argv('contacts', 'x'), sized, 24, [])).toBe(false);
    expect(runsInWorker(argv('contacts', 'x'), {}, 24, ['--max-semi-space-size=32'])).toBe(false);
    expect(
      runsInWorker(argv('contacts', 'x'), { NODE_OPTIONS: '--max-old-space-size=512' }, 24, []),
    ).toBe(true);
  });
});
