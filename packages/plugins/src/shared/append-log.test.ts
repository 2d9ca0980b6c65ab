import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppendLog, linePieces } from './append-log';

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('AppendLog', () => {
  let dir: string;
  let file: string;
  const open: AppendLog[] = [];
  const appendLog = (options?: ConstructorParameters<typeof AppendLog>[1]) => {
    const log = new AppendLog(file, options);
    open.push(log);
    return log;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-append-log-'));
    file = join(dir, 'out.log');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((log) => log.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every line once, in order, across many chunks, with multi-byte text and a line longer than a chunk', async () => {
    const log = appendLog({ flushDelayMs: 20 });
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(`{"n":${i},"path":"/é/ü/${'x'.repeat(i % 200)}","emoji":"🙂"}`);
    lines.splice(2500, 0, 'L'.repeat(200 * 1024));
    for (const line of lines) log.write(line);
    await log.drained();
    expect(readFileSync(file, 'utf8')).toBe(`${lines.join('\n')}\n`);
    expect(log.written).toBe(lines.length);
  });

  it('with asciiLines, writes ASCII lines byte for byte across chunks, a line longer than a chunk included', async () => {
    const log = appendLog({ flushDelayMs: 20, asciiLines: true });
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(`{"n":${i},"path":"/caf\\u00e9/${'x'.repeat(i % 200)}","del":"\x7f"}`);
    lines.splice(2500, 0, 'L'.repeat(200 * 1024));
    for (const line of lines) log.write(line);
    await log.drained();
    const written = readFileSync(file);
    expect(written.length).toBe(lines.reduce((n, line) => n + line.length + 1, 0));
    expect(written.toString('latin1')).toBe(`${lines.join('\n')}\n`);
  });

  it('a batch goes out once flushBytes wait, without waiting for the delay', async () => {
    const log = appendLog({ flushDelayMs: 60_000, flushBytes: 1024 });
    for (let i = 0; i < 40; i++) log.write(`line ${i} ${'.'.repeat(40)}`);
    await waitFor('the first batch', () => existsSync(file) && readFileSync(file, 'utf8').startsWith('line 0 '));
  });

  it('drained() and close() write what waits at once, whatever the delay', async () => {
    const log = appendLog({ flushDelayMs: 60_000 });
    log.write('first');
    await log.drained();
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    log.write('last');
    await log.close();
    expect(readFileSync(file, 'utf8')).toBe('first\nlast\n');
    log.write('after close');
    expect(log.written).toBe(2);
  });

  it('reopen() hands what waits to the file it had, and the next lines to a new file at the path', async () => {
    const log = appendLog({ flushDelayMs: 60_000 });
    log.write('before');
    await log.drained();
    log.write('waiting at rotation');
    renameSync(file, `${file}.1`);
    log.reopen();
    log.write('after');
    await log.drained();
    await waitFor('the rotated file to hold its lines', () => readFileSync(`${file}.1`, 'utf8') === 'before\nwaiting at rotation\n');
    expect(readFileSync(file, 'utf8')).toBe('after\n');
  });

  it('drops and counts lines past maxPendingBytes', async () => {
    const log = appendLog({ flushDelayMs: 60_000, flushBytes: 1 << 20, maxPendingBytes: 100 });
    for (let i = 0; i < 10; i++) log.write('x'.repeat(30));
    expect(log.dropped).toBe(7);
    await log.drained();
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(3);

  });
});

describe('linePieces', () => {
  it('cuts a batch at line ends into pieces no larger than the limit, losing nothing', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 50)}","é":"ü"}`);
    const batch = `${lines.join('\n')}\n`;
    const pieces = linePieces(Buffer.from(batch), 512).map(String);
    expect(pieces.join('')).toBe(batch);
    for (const piece of pieces) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(512);
      expect(piece.endsWith('\n')).toBe(true);
    }
  });

  it('keeps a line longer than the limit whole, in a piece of its own', () => {
    const long = `${'y'.repeat(100)}\n`;
    expect(linePieces(Buffer.from(`a\n${long}b\n`), 10).map(String)).toEqual(['a\n', long, 'b\n']);
    expect(linePieces(Buffer.from('a\nb\n'), 10).map(String)).toEqual(['a\nb\n']);
  });
});
