import { describe, expect, it } from '@jest/globals';
import { Fifo } from './fifo';

describe('Fifo', () => {
  it('gives items back in the order they came, across compactions', () => {
    const fifo = new Fifo<number>();
    const seen: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 97; i++) fifo.push(next++);
      seen.push(...fifo.take(round % 3 === 0 ? 1 : 90));
    }
    seen.push(...fifo.take(Number.MAX_SAFE_INTEGER));
    expect(seen).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(fifo.length).toBe(0);
  });

  it('takes fewer than asked when it holds fewer', () => {
    const fifo = new Fifo<string>();
    fifo.push('a');
    expect(fifo.take(3)).toEqual(['a']);
    expect(fifo.take(1)).toEqual([]);
  });
});
