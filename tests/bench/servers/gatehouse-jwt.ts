// Gatehouse data plane: jwt with an HS256 credential in front of UPSTREAM_URL.
// Send `authorization: Bearer <token>` with the token from ./jwt-token (benchJwt()); it is also printed as `TOKEN <token>`.
import { makeConsumer, makeCredential, makePlugin } from '@gatehouse/testkit';
import { serveGateway } from './gatehouse-serve';
import { BENCH_JWT_KEY, BENCH_JWT_SECRET, benchJwt } from './jwt-token';

const consumer = makeConsumer({ username: 'bench' });

process.stdout.write(`TOKEN ${benchJwt()}\n`);
await serveGateway({
  consumers: [consumer],
  credentials: { jwt_secrets: [makeCredential(consumer, { key: BENCH_JWT_KEY, secret: BENCH_JWT_SECRET, algorithm: 'HS256', rsa_public_key: null })] },
  plugins: (serviceId) => [makePlugin({ name: 'jwt', service: { id: serviceId }, config: {} })],
});
