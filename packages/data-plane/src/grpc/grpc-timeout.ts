/** gRPC's `grpc-timeout` units → milliseconds (`H` hours … `n` nanoseconds). */
const UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** A `grpc-timeout` value (up to 8 digits and a unit) in milliseconds, or null when absent or malformed. */
export function parseGrpcTimeout(value: string | string[] | undefined): number | null {
  if (typeof value !== 'string') return null;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (m === null) return null;
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}
