import { declareIndex } from '../shared/credential-index';
import { JwtCredential } from './credential';
import { JWT_ALGORITHMS, jwtSecrets, type JwtAlgorithm } from './entities';

export { JwtCredential } from './credential';

const KNOWN_ALGORITHMS = new Set<string>(JWT_ALGORITHMS);
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** credential `key` → credential (its secret or public key parsed again whenever the row changes) and consumer. */
export const jwtIndex = declareIndex(jwtSecrets, {
  keyedBy: { byKey: 'key' },
  entry(row, result) {
    const algorithm = typeof row.algorithm === 'string' && KNOWN_ALGORITHMS.has(row.algorithm) ? (row.algorithm as JwtAlgorithm) : 'HS256';
    return new JwtCredential(algorithm, text(row.secret), text(row.rsa_public_key), result);
  },
});

export type JwtIndex = ReturnType<typeof jwtIndex.compile>;
