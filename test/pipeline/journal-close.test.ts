import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Fs from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { openJournal } from '../../src/pipeline/journal/journal.js';
import { LEADS_HEADER, ticking } from '../helpers/journal-run.js';

// A journal whose file will not close (EIO from close: a failing disk, a network file system).

const closing = vi.hoisted(() => ({ fails: false }));
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof Fs>();
  const open: typeof real.open = async (...args) => {
    const handle = await real.open(...args);
    if (closing.fails && String(args[0]).endsWith('journal.jsonl')) {
      const close = handle.close.bind(handle);
      handle.close = async () => {
        await close();
        throw Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' });
      };
    }
    return handle;
  };
  return { ...real, open, default: { ...real, open } };
});

const header = LEADS_HEADER;
const now = ticking();

describe('closing a journal whose file will not close', () => {
  it('fails, and lets the run lock go: the same job is not refused as still running (regression: the lock was kept)', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-close-'));
    closing.fails = true;
    const j = await openJournal({ runsDir, key: 'k', header, restart: false, now });
    closing.fails = false;
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
    await expect(j.close()).rejects.toThrow('EIO');
    const again = await openJournal({ runsDir, key: 'k', header, restart: false, now });
    expect(again.resumed).toBe(true);
    expect(again.state.batches.get('0')?.idem).toBe('i');
    await again.close();
  });
});
