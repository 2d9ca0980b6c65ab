import { makeConsumer, makeCredential, makePlugin } from '@gatehouse/testkit';
import { serveGateway } from './gatehouse-serve';
const consumer = makeConsumer({ username: 'bench' });
await serveGateway({
  consumers: [consumer],
  credentials: { keyauth_credentials: [makeCredential(consumer, { key: 'bench-key' })] },
  plugins: (serviceId) => [makePlugin({ name: 'key-auth', service: { id: serviceId }, config: {} })],
});
