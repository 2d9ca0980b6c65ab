/**
 * Kong's trace-id ratio sampler: a trace is sampled when its id's first 8 bytes, read as an unsigned integer, fall
 * under `rate` of the range, so every gateway that sees the same trace id decides the same way.
 */
export function sampledByTraceId(traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const head = Buffer.from(traceId.slice(0, 16).padEnd(16, '0'), 'hex').readBigUInt64LE(0);
  return Number(head) / 2 ** 64 < rate;
}
