// A TCP server that sends 64 KiB blocks to each connection as fast as the connection takes them. Prints `LISTENING <port>`.
import { createServer, type Socket } from 'node:net';

const block = Buffer.alloc(64 * 1024, 0x61);
const server = createServer((socket: Socket) => {
  socket.on('error', () => socket.destroy());
  const pump = () => {
    while (socket.write(block));
  };
  socket.on('drain', pump);
  pump();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
