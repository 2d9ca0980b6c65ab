import { randomUUID } from 'node:crypto';
import type { CorrelationIdConfig } from './schema';

/** One uuid per process for `uuid#counter`, then a counter: `<uuid>#<n>`, as Kong's per-worker generator. */
const processUuid = randomUUID();
let counter = 0;
let trackerCounter = 0;

/** A fresh correlation id from the configured generator. */
export function generateCorrelationId(generator: CorrelationIdConfig['generator']): string {
  if (generator === 'uuid') return randomUUID();
  if (generator === 'uuid#counter') return `${processUuid}#${++counter}`;
  // Kong's tracker joins nginx variables (server address, port, pid, connection, requests, msec); without nginx we
  // keep its shape with what the process knows: pid, a request counter and the time in seconds with milliseconds
  return `${process.pid}-${++trackerCounter}-${(Date.now() / 1000).toFixed(3)}`;
}
