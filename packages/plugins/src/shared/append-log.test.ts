import { describe, expect, it } from '@jest/globals';
import { linePieces } from './append-log';

describe('linePieces', () => {
  it('cuts a batch at line ends into pieces no larger than the limit, losing nothing', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 50)}","é":"ü"}`);
    const batch = `${lines.join('\n')}\n`;
    const pieces = linePieces(batch, 512);
    expect(pieces.join('')).toBe(batch);
    for (const piece of pieces) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(512);
      expect(piece.endsWith('\n')).toBe(true);
    }
  });

  it('keeps a line longer than the limit whole, in a piece of its own', () => {
    const long = `${'y'.repeat(100)}\n`;
    expect(linePieces(`a\n${long}b\n`, 10)).toEqual(['a\n', long, 'b\n']);
    expect(linePieces('a\nb\n', 10)).toEqual(['a\nb\n']);
  });
});
