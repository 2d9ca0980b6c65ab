// A Gatehouse data plane with one TCP stream listener and one tcp route to UPSTREAM_PORT. Prints `LISTENING <port>`
// (the stream listener's).
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'stream-bench', url: `tcp://127.0.0.1:${process.env.UPSTREAM_PORT}` });
const route = makeRoute({ protocols: ['tcp'], sources: [{ ip: '127.0.0.0/8' }], service: { id: service.id } });
const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route] })));
const server = await createDataPlaneServer({
  holder,
  listen: { host: '127.0.0.1', port: 0 },
  streamListen: [{ host: '127.0.0.1', port: 0, ssl: false, udp: false }],
});
process.stdout.write(`LISTENING ${server.streamPorts[0]}\n`);
