import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
/** ids a draw of random bytes makes (64 KiB): a draw costs 2–5 µs at 4 KiB and 11–12 µs at 64 KiB, 3 ns an id */
const POOL_IDS = 4096;
const pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let next = POOL_IDS;

/**
 * A request id like Kong's (`X-Kong-Request-Id`): 32 lower-case hex characters from 16 random bytes. Random bytes are
 * drawn 64 KiB at a time, so an id costs one hex conversion.
 */
export function newRequestId(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const at = next++ * ID_BYTES;
  return pool.toString('hex', at, at + ID_BYTES);
}
