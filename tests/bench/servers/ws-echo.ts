// A WebSocket echo server (ws). Prints `LISTENING <port>`.
import { WebSocketServer } from 'ws';

const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
server.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
server.on('listening', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
