import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import type { StreamEvent } from './providers';

/**
 * Splits a server-sent event stream into events as they arrive (never the whole body): `event:` and `data:` fields,
 * several `data:` lines joined by newlines, comments and other fields ignored, CRLF or LF line ends. A line that is a
 * JSON object on its own (newline-delimited JSON streams) is one event.
 */
export class SseParser {
  private pending = '';
  private event: string | null = null;
  private data: string[] = [];

  /** the events completed by this chunk */
  push(chunk: string): StreamEvent[] {
    const events: StreamEvent[] = [];
    this.pending += chunk;
    let start = 0;
    for (let end = this.pending.indexOf('\n', start); end !== -1; end = this.pending.indexOf('\n', start)) {
      const line = this.pending.slice(start, end).replace(/\r$/, '');
      start = end + 1;
      if (line === '') {
        if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
        this.event = null;
        this.data = [];
        continue;
      }
      // newline-delimited JSON (Cohere's and Ollama's streams): each object line is an event of its own
      if (line.startsWith('{') && this.data.length === 0 && this.event === null) {
        events.push({ event: null, data: line });
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
    }
    this.pending = this.pending.slice(start);
    return events;
  }

  /** an event left without its blank line when the stream ended */
  end(): StreamEvent[] {
    const rest = this.pending.length > 0 ? this.push('\n\n') : [];
    if (this.data.length > 0) rest.push({ event: this.event, data: this.data.join('\n') });
    return rest;
  }
}

/** Turns a provider's response bytes into events as they arrive. */
export interface EventFramer {
  push(chunk: Buffer): StreamEvent[];
  end(): StreamEvent[];
}

/** Server-sent events (and newline-delimited JSON); a character split between chunks waits for its other bytes. */
export function sseFramer(): EventFramer {
  const parser = new SseParser();
  const decoder = new StringDecoder('utf8');
  return {
    push: (chunk) => parser.push(decoder.write(chunk)),
    end: () => [...parser.push(decoder.end()), ...parser.end()],
  };
}

/** The provider's events in, server-sent `data:` frames out: `translate` turns each event into frames. */
export function eventTransform(framer: EventFramer, translate: (event: StreamEvent) => string[], finish: () => string[]): Transform {
  const emit = (stream: Transform, frames: string[]): void => {
    for (const frame of frames) stream.push(`data: ${frame}\n\n`);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        for (const event of framer.push(chunk)) emit(this, translate(event));
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
    flush(callback: TransformCallback) {
      for (const event of framer.end()) emit(this, translate(event));
      emit(this, finish());
      callback();
    },
  });
}

/** A server-sent event stream in, server-sent `data:` frames out. */
export function sseTransform(translate: (event: StreamEvent) => string[], finish: () => string[]): Transform {
  return eventTransform(sseFramer(), translate, finish);
}

/** The provider's bytes passed on unchanged (a native-format stream), its events read on the side as they pass. */
export function eventTap(framer: EventFramer, read: (event: StreamEvent) => void, finish: () => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        for (const event of framer.push(chunk)) read(event);
        callback(null, chunk);
      } catch (err) {
        callback(err as Error);
      }
    },
    flush(callback: TransformCallback) {
      for (const event of framer.end()) read(event);
      finish();
      callback();
    },
  });
}
