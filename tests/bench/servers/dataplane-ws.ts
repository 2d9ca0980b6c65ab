// A Gatehouse data plane with one route to the WebSocket echo at UPSTREAM_PORT, no plugins. Prints `LISTENING <port>`.
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'ws-bench', url: `http://127.0.0.1:${process.env.UPSTREAM_PORT}` });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route] })));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 } });
process.stdout.write(`LISTENING ${server.port}\n`);
