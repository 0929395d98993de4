import { execFileSync, spawn } from 'node:child_process';
import {
  chmod,
  lstat,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeOutputFile } from '../../src/io/atomic-write.js';
import { checkOutputTarget, createOutputWriter, type OutputRow } from '../../src/io/write.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';
import { readFifo } from '../helpers/fifo.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-target-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const isRoot = process.getuid?.() === 0;
const row = (i: number): OutputRow => ({
  row: i + 1,
  input: { index: i, line: i + 2, cells: [`r${i}@acme.com`] },
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
});

async function writeRows(target: string, n: number): Promise<void> {
  const w = await createOutputWriter({
    target,
    format: 'csv',
    inputHeader: ['Email'],
    jsonKeys: ['Email'],
    extraColumns: [],
  });
  for (let i = 0; i < n; i++) await w.write(row(i));
  await w.close();
}

const expected = (n: number) =>
  ['Email,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at']
    .concat(Array.from({ length: n }, (_, i) => `r${i}@acme.com,enriched,,true,`))
    .join('\n') + '\n';

describe('output targets: files are replaced atomically, devices and pipes written through', () => {
  rootTest(
    '(root: mknod) a device node made with mknod stays a device and is written through; /dev/null is a stream',
    async () => {
      // The machine's own /dev/null is only asked about: writing it with a broken writer would replace it.
      expect(await checkOutputTarget('/dev/null')).toMatchObject({ mode: 'stream' });
      // Only root can make a device node (rootTest: always run under CI).
      expect(isRoot, 'run as root: mknod needs it').toBe(true);
      const node = join(dir, 'null-device');
      execFileSync('mknod', [node, 'c', '1', '3']);
      const made = await stat(node);
      await writeRows(node, 10);
      await writeFileAtomic(node, 'mapping'); // --save-mapping's path
      const kept = await stat(node);
      expect(kept.isCharacterDevice()).toBe(true);
      expect([kept.ino, kept.rdev]).toEqual([made.ino, made.rdev]);
      expect(await readdir(dir)).toEqual(['null-device']);
    },
  );

  it('a FIFO stays a FIFO and its reader receives the whole output', async () => {
    const fifo = join(dir, 'out.fifo');
    const reading = readFifo(fifo);
    await writeRows(fifo, 2000);
    expect((await reading).toString()).toBe(expected(2000));
    expect((await stat(fifo)).isFIFO()).toBe(true);
    expect(await readdir(dir)).toEqual(['out.fifo']);
  });

  it('a process substitution (bash >(cat > file), a pipe as /dev/fd/63 is) receives the output', async () => {
    const out = join(dir, 'from-pipe.csv');
    // bash keeps the pipe open as its fd 3 until its stdin closes; the test writes to it by name.
    const script = 'exec 3> >(cat > "$1"); echo ready; read _; exec 3>&-; sleep 0.2';
    const bash = spawn('bash', ['-c', script, 'bash', out], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((ok) => bash.stdout.once('data', ok));
    const target = `/proc/${bash.pid}/fd/3`;
    expect((await stat(target)).isFIFO()).toBe(true);
    expect((await checkOutputTarget(target)).mode).toBe('stream');
    await writeRows(target, 50);
    bash.stdin.end();
    await new Promise((ok) => bash.on('close', ok));
    let text = '';
    for (let i = 0; i < 50 && text !== expected(50); i++) {
      await new Promise((ok) => setTimeout(ok, 20));
      text = await readFile(out, 'utf8').catch(() => '');
    }
    expect(text).toBe(expected(50));
  });

  it('/dev/stdout is written through, never replaced', async () => {
    expect(await checkOutputTarget('/dev/stdout')).toMatchObject({ mode: 'stream' });
    expect(await checkOutputTarget('-')).toMatchObject({ mode: 'stdout' });
  });

  it('a symlink stays a link and its target gets the new content', async () => {
    await writeFile(join(dir, 'real.csv'), 'old\n');
    await symlink('real.csv', join(dir, 'link.csv'));
    await writeRows(join(dir, 'link.csv'), 3);
    expect((await lstat(join(dir, 'link.csv'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(dir, 'link.csv'))).toBe('real.csv');
    expect(await readFile(join(dir, 'real.csv'), 'utf8')).toBe(expected(3));
    await writeOutputFile(join(dir, 'link.csv'), '{}\n');
    expect((await lstat(join(dir, 'link.csv'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, 'real.csv'), 'utf8')).toBe('{}\n');
    expect((await readdir(dir)).sort()).toEqual(['link.csv', 'real.csv']);
  });

  it('a dangling symlink names the file to create', async () => {
    await symlink('made.csv', join(dir, 'link.csv'));
    await writeRows(join(dir, 'link.csv'), 1);
    expect((await lstat(join(dir, 'link.csv'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, 'made.csv'), 'utf8')).toBe(expected(1));
  });

  it('an existing file keeps its mode (0600 stays 0600); a new one follows the umask', async () => {
    const target = join(dir, 'out.csv');
    await writeFile(target, 'old\n', { mode: 0o600 });
    await chmod(target, 0o600);
    await writeRows(target, 1);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    await writeOutputFile(target, 'x\n');
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    const fresh = join(dir, 'new.csv');
    await writeRows(fresh, 1);
    const umask = process.umask();
    expect((await stat(fresh)).mode & 0o777).toBe(0o666 & ~umask);
  });
});

describe('output targets that cannot be written are refused before anything is sent', () => {
  it('a missing directory, a directory, a path through a file: USAGE naming the path and the cause', async () => {
    const missing = join(dir, 'nope', 'out.csv');
    await expect(checkOutputTarget(missing)).rejects.toMatchObject({
      code: 'USAGE',
      message: `cannot write ${missing}: its directory ${join(dir, 'nope')} does not exist`,
    });
    await expect(checkOutputTarget(dir)).rejects.toMatchObject({
      code: 'USAGE',
      message: `cannot write ${dir}: it is a directory`,
    });
    await writeFile(join(dir, 'file'), '');
    await expect(checkOutputTarget(join(dir, 'file', 'out.csv'))).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('is not a directory') as string,
    });
  });

  rootTest('(root: a tmpfs) a read-only file system is refused up front', async () => {
    await withTmpfs('ro,size=64k', async (ro) => {
      await expect(checkOutputTarget(join(ro, 'out.csv'))).rejects.toMatchObject({
        code: 'USAGE',
        message: `cannot write ${join(ro, 'out.csv')}: its directory ${ro}: read-only file system`,
      });
    });
  });
});
