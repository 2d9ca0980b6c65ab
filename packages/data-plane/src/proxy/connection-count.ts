/**
 * Per client connection: its serial number in this process and how many requests it carried so far (nginx's
 * `$connection` and `$connection_requests`, which correlation-id's `tracker` generator reads).
 */
export interface ConnectionCount {
  readonly serial: number;
  requests: number;
}

const counts = new WeakMap<object, ConnectionCount>();
let lastSerial = 0;

/** Counts one more request on `socket` and returns its connection's numbers. */
export function countRequest(socket: object): ConnectionCount {
  let count = counts.get(socket);
  if (count === undefined) {
    count = { serial: ++lastSerial, requests: 0 };
    counts.set(socket, count);
  }
  count.requests++;
  return count;
}
