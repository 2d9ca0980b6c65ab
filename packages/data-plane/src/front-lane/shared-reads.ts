import { Socket } from 'node:net';
import { Duplex } from 'node:stream';

/** what every front-lane connection of the process reads into (the most one read brings, as Node's own reads) */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

interface ReadingHandle {
  useUserBuffer?(buffer: Uint8Array): void;
}

/**
 * Node's `onread` option (a socket read into the caller's buffer, handed to a callback instead of the stream) exists
 * for sockets Node connects, not for the ones a server accepts. The socket keeps the option's buffer and callback
 * under two symbols of its own, found here by their names; without them the lane reads through the stream.
 */
const [BUFFER_KEY, CALLBACK_KEY] = ((): [symbol | undefined, symbol | undefined] => {
  const symbols = Object.getOwnPropertySymbols(new Socket());
  return [symbols.find((s) => s.description === 'kBuffer'), symbols.find((s) => s.description === 'kBufferCb')];
})();

/** Whether `bytes` lie in the shared read buffer: valid only until the callback that got them returns. */
export function inReadBuffer(bytes: Buffer): boolean {
  return bytes.buffer === READ_BUFFER.buffer;
}

/** `bytes` as memory of their own when they lie in the shared read buffer (to be kept past the read's callback). */
export function kept(bytes: Buffer): Buffer {
  return bytes.buffer === READ_BUFFER.buffer ? Buffer.from(bytes) : bytes;
}

/**
 * Has a freshly accepted socket read into the process's read buffer and hand each read to `onBytes`, as Node's
 * `onread` does: no memory allocated per read, no pass through the stream's queue and `data` event. The bytes are
 * valid until `onBytes` returns. False (nothing changed) when this Node lacks the means, or the stream already holds
 * bytes or has a reader (the socket is then read through its `data` events).
 */
export function readIntoSharedBuffer(socket: Socket, onBytes: (bytes: Buffer) => void): boolean {
  const handle = (socket as Socket & { _handle?: ReadingHandle | null })._handle;
  if (BUFFER_KEY === undefined || CALLBACK_KEY === undefined || typeof handle?.useUserBuffer !== 'function') return false;
  if (socket.readableLength > 0 || socket.listenerCount('data') > 0) return false;
  handle.useUserBuffer(READ_BUFFER);
  Reflect.set(socket, BUFFER_KEY, READ_BUFFER);
  Reflect.set(socket, CALLBACK_KEY, (read: number) => {
    onBytes(READ_BUFFER.subarray(0, read));
    return true;
  });
  return true;
}

/**
 * A socket read into the shared buffer goes back to its stream (node:http takes the connection over): each read is
 * copied and pushed, and the stream's back-pressure pauses the reads as it would. A socket read through `onread`
 * also stops reading the moment it is paused, where a stream socket reads on until its buffer is full (and so sees
 * the client's end while paused): the socket gets the stream's own pause back. (Its resume and read still start the
 * reads a pause or a full buffer stopped.)
 */
export function readThroughStream(socket: Socket): void {
  if (BUFFER_KEY === undefined || CALLBACK_KEY === undefined || Reflect.get(socket, BUFFER_KEY) !== READ_BUFFER) return;
  Reflect.set(socket, CALLBACK_KEY, (read: number) => socket.push(Buffer.from(READ_BUFFER.subarray(0, read))));
  Reflect.set(socket, 'pause', Duplex.prototype.pause);
}
