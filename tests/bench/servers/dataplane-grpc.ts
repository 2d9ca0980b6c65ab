// A Gatehouse data plane whose plain listener also takes h2c (Kong's `http2` flag), one gRPC route to the echo
// service at UPSTREAM_PORT, no plugins, and an `http` route `/web` with the grpc-web plugin (pass_stripped_path) to the
// same service. Prints `LISTENING <port>`.
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'grpc-bench', url: `grpc://127.0.0.1:${process.env.UPSTREAM_PORT}` });
const route = makeRoute({ protocols: ['grpc'], paths: ['/gatehouse.test.Echo/'], strip_path: false, service: { id: service.id } });
const web = makeRoute({ protocols: ['http'], paths: ['/web'], service: { id: service.id } });
const plugin = makePlugin({ name: 'grpc-web', route: { id: web.id }, config: { pass_stripped_path: true } });
const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route, web], plugins: [plugin] })));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, h2c: true });
process.stdout.write(`LISTENING ${server.port}\n`);
