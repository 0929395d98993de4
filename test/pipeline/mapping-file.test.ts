import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnrichError } from '../../src/errors.js';
import { detectMapping } from '../../src/pipeline/mapping/map-columns.js';
import { saveMapping } from '../../src/pipeline/mapping/mapping-file.js';

const header = ['Email', 'Company'];
const mapping = detectMapping('contacts', header, []);
const saved = { business_email: 'Email', company_name: 'Company' };

async function failure(path: string): Promise<EnrichError> {
  try {
    await saveMapping(path, 'contacts', mapping, header);
  } catch (err) {
    expect(err).toBeInstanceOf(EnrichError);
    return err as EnrichError;
  }
  throw new Error(`expected saveMapping(${path}) to fail`);
}

describe('saveMapping', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'enrich-save-map-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces an existing file whole and leaves no temp beside it', async () => {
    const file = join(dir, 'm.json');
    await writeFile(file, 'old content that is longer than the new mapping '.repeat(10));
    await saveMapping(file, 'contacts', mapping, header);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(saved);
    expect(await readdir(dir)).toEqual(['m.json']);
  });

  it('a missing directory is a usage error naming the file (exit 2), not an internal one', async () => {
    const file = join(dir, 'no-such-dir', 'm.json');
    const err = await failure(file);
    expect(err).toMatchObject({ code: 'USAGE', exitCode: 2, location: { file } });
    expect(err.message).toBe(`cannot write ${file}: its directory does not exist`);
  });

  it('a directory as the target is a usage error naming it, and nothing is left behind', async () => {
    const target = join(dir, 'out');
    await mkdir(target);
    const err = await failure(target);
    expect(err).toMatchObject({ code: 'USAGE', exitCode: 2, location: { file: target } });
    expect(err.message).toBe(`cannot write ${target}: it is a directory`);
    expect(await readdir(dir)).toEqual(['out']);
    expect(await readdir(target)).toEqual([]);
  });

  it('a file in the middle of the path is a usage error naming the file', async () => {
    await writeFile(join(dir, 'plain'), '');
    const file = join(dir, 'plain', 'm.json');
    const err = await failure(file);
    expect(err).toMatchObject({ code: 'USAGE', exitCode: 2, location: { file } });
    expect(err.message).toBe(`cannot write ${file}: a part of its path is not a directory`);
  });

  it.skipIf(process.platform === 'win32' || process.getuid?.() === 0)(
    'an unwritable directory is a usage error naming the file',
    async () => {
      const locked = join(dir, 'locked');
      await mkdir(locked, { mode: 0o500 });
      const file = join(locked, 'm.json');
      const err = await failure(file);
      expect(err).toMatchObject({ code: 'USAGE', exitCode: 2, location: { file } });
      expect(err.message).toMatch(new RegExp(`^cannot write ${file}: permission denied`));
    },
  );
});
