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

  it('shifts and peeks without taking arrays, in order with take', () => {
    const fifo = new Fifo<number>();
    for (let i = 0; i < 3000; i++) fifo.push(i);
    expect(fifo.at(0)).toBe(0);
    expect(fifo.at(2999)).toBe(2999);
    expect(fifo.at(3000)).toBeUndefined();
    const seen: number[] = [];
    // past the compaction point (1024 taken and more than half)
    for (let i = 0; i < 1600; i++) seen.push(fifo.shift()!);
    expect(fifo.at(0)).toBe(1600);
    seen.push(...fifo.take(400));
    while (fifo.length > 0) seen.push(fifo.shift()!);
    expect(seen).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(fifo.shift()).toBeUndefined();
  });

  it('takes fewer than asked when it holds fewer', () => {
    const fifo = new Fifo<string>();
    fifo.push('a');
    expect(fifo.take(3)).toEqual(['a']);
    expect(fifo.take(1)).toEqual([]);
  });
});
