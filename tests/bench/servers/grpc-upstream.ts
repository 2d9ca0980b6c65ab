// The gRPC echo service (tests/e2e/support/grpc) as a process of its own. Prints `LISTENING <port>`.
import { startGrpcEcho } from '../../e2e/support/grpc/echo-server';

const server = await startGrpcEcho('bench');
process.stdout.write(`LISTENING ${server.port}\n`);
