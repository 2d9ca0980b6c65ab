// Gatehouse data plane: jwt with an HS256 credential in front of UPSTREAM_URL. Prints `JWT <token>` before its
// LISTENING line: send it as `authorization: Bearer <token>` (the same token as benchJwt() in ./jwt-token).
import { makeConsumer, makeCredential, makePlugin } from '@gatehouse/testkit';
import { serveGateway } from './dataplane-serve';
import { BENCH_JWT_KEY, BENCH_JWT_SECRET, benchJwt } from './jwt-token';

const consumer = makeConsumer({ username: 'bench' });

process.stdout.write(`JWT ${benchJwt()}\n`);
await serveGateway({
  consumers: [consumer],
  credentials: { jwt_secrets: [makeCredential(consumer, { key: BENCH_JWT_KEY, secret: BENCH_JWT_SECRET, algorithm: 'HS256', rsa_public_key: null })] },
  plugins: (serviceId) => [makePlugin({ name: 'jwt', service: { id: serviceId }, config: {} })],
});
