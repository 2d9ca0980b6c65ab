import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { EventFramer } from './sse';
import type { StreamEvent } from './providers';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`, Bedrock's converse-stream): messages cut out by
 * their length prefix as bytes arrive and decoded (checksums verified) by the AWS SDK's codec; each becomes an event
 * named by its `:event-type` header with the message body as data.
 */
export function awsEventStreamFramer(): EventFramer {
  let pending: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const events: StreamEvent[] = [];
      while (pending.length >= 4) {
        const length = pending.readUInt32BE(0);
        if (pending.length < length) break;
        const message = codec.decode(new Uint8Array(pending.buffer, pending.byteOffset, length));
        pending = pending.subarray(length);
        const type = message.headers[':event-type']?.value;
        events.push({ event: typeof type === 'string' ? type : null, data: toUtf8(message.body) });
      }
      return events;
    },
    end: () => [],
  };
}
