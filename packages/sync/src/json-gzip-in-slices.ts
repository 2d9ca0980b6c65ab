import { createGzip } from 'node:zlib';

/**
 * The gzip of a value's JSON, made a piece at a time (decision 26): a snapshot of 100,000 consumers, or a delta
 * carrying a 64 MiB configuration, is never one JSON string nor one buffer of its whole size, and no single step holds
 * up the event loop. Objects down to `SPLIT_DEPTH` (a snapshot, its config, the credential entities; a delta, its
 * changes, a section's) are written member by member, arrays element by element, each element (a row) with
 * JSON.stringify; the text is what JSON.stringify gives. The value must not change until the promise settles.
 */
const SPLIT_DEPTH = 4;
/** characters handed to gzip at once */
const PIECE_CHARS = 256 * 1024;

/** what JSON.stringify leaves out of an object (and writes as null in an array) */
function hasNoJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

function* jsonPieces(value: unknown, depth: number): Generator<string> {
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      yield `${i ? ',' : ''}${hasNoJson(item) ? 'null' : JSON.stringify(item)}`;
    }
    yield ']';
    return;
  }
  if (depth >= SPLIT_DEPTH || value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  yield '{';
  let first = true;
  for (const [key, member] of Object.entries(value)) {
    if (hasNoJson(member)) continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonPieces(member, depth + 1);
  }
  yield '}';
}

/** gzip (level 1, as the whole-text path) of `JSON.stringify(value)`, compressed in the thread pool */
export function gzipJsonInSlices(value: object): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gzip = createGzip({ level: 1 });
    const out: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => out.push(chunk));
    gzip.on('error', reject);
    gzip.on('end', () => resolve(Buffer.concat(out)));
    const pieces = jsonPieces(value, 0);
    const pump = (): void => {
      try {
        let batch = '';
        for (let next = pieces.next(); ; next = pieces.next()) {
          if (next.done) {
            gzip.end(batch);
            return;
          }
          batch += next.value;
          if (batch.length >= PIECE_CHARS) {
            // on to the next piece once gzip took this one in (its queue drained)
            if (gzip.write(batch)) setImmediate(pump);
            else gzip.once('drain', pump);
            return;
          }
        }
      } catch (err) {
        gzip.destroy();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    pump();
  });
}
