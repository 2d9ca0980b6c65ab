// A Gatehouse data plane whose plain listener also takes h2c (Kong's `http2` flag), one gRPC route to the echo
// service at UPSTREAM_PORT, no plugins. Prints `LISTENING <port>`.
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'grpc-bench', url: `grpc://127.0.0.1:${process.env.UPSTREAM_PORT}` });
const route = makeRoute({ protocols: ['grpc'], paths: ['/gatehouse.test.Echo/'], strip_path: false, service: { id: service.id } });
const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route] })));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, h2c: true });
process.stdout.write(`LISTENING ${server.port}\n`);
