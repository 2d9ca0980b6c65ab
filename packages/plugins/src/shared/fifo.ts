/**
 * A first-in first-out list whose front is taken without moving the rest: taking (or dropping) from the front of a
 * full queue costs what is taken, not the queue's length. The space of taken items is given back once they are the
 * larger half.
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** the item `index` places from the front (0: the first), undefined past the end */
  at(index: number): T | undefined {
    const at = this.head + index;
    return at < this.items.length ? this.items[at] : undefined;
  }

  /** removes and answers the first item (undefined when empty), making no array for it */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.advance(this.head + 1);
    return item;
  }

  /** removes and answers the first `count` items (fewer when there are fewer) */
  take(count: number): T[] {
    const end = Math.min(this.items.length, this.head + count);
    const taken = this.items.slice(this.head, end);
    this.advance(end);
    return taken;
  }

  /** moves the front to `head`, giving back the space before it once that is all or the larger half */
  private advance(head: number): void {
    this.head = head;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
