// A data plane with two routes in front of UPSTREAM_URL, for the basic-auth stall scenario:
//   /public  no plugins;
//   /login   basic-auth, one credential (user `bench`, password `right`, stored as bcrypt at the default cost).
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { hashPassword } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const upstream = process.env.UPSTREAM_URL;
if (!upstream) throw new Error('UPSTREAM_URL is required');
const service = makeService({ name: 'bench', url: upstream });
const publicRoute = makeRoute({ name: 'public', paths: ['/public'], service: { id: service.id } });
const loginRoute = makeRoute({ name: 'login', paths: ['/login'], service: { id: service.id } });
const consumer = makeConsumer({ username: 'bench' });
const stored = await hashPassword({ username: 'bench', password: 'right' }, null);
const snapshot = makeSnapshot({
  services: [service],
  routes: [publicRoute, loginRoute],
  consumers: [consumer],
  plugins: [makePlugin({ name: 'basic-auth', route: { id: loginRoute.id }, config: {} })],
  credentials: { basicauth_credentials: [makeCredential(consumer, { username: 'bench', password: stored.password })] },
});
const quiet = { error: () => undefined, warn: () => undefined };
const server = await createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, runtime: { log: quiet }, log: quiet });
const stop = async () => {
  await server.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdout.write(`LISTENING ${server.port}\n`);
