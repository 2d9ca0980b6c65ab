// The HS256 token the jwt benchmark sends: `Authorization: Bearer <token>`, signed with the credential's secret.
import { createHmac } from 'node:crypto';

export const BENCH_JWT_KEY = 'bench-iss';
export const BENCH_JWT_SECRET = 'bench-jwt-secret-of-32-characters';

export function benchJwt(key = BENCH_JWT_KEY, secret = BENCH_JWT_SECRET): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: key })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
