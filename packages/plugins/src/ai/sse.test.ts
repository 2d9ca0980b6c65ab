import { describe, expect, it } from '@jest/globals';
import { SseParser, sseTransform } from './sse';

describe('SseParser', () => {
  it('gives each event once its blank line arrives, whatever the chunk boundaries', () => {
    const text = 'event: message_start\ndata: {"a":1}\n\n: a comment\ndata: line one\ndata: line two\r\n\r\ndata: [DONE]\n\n';
    for (let cut = 1; cut < text.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut)), ...parser.end()];
      expect(events).toEqual([
        { event: 'message_start', data: '{"a":1}' },
        { event: null, data: 'line one\nline two' },
        { event: null, data: '[DONE]' },
      ]);
    }
  });

  it('takes a JSON object line as an event of its own (newline-delimited JSON streams)', () => {
    const parser = new SseParser();
    expect(parser.push('{"event_type":"stream-start"}\n{"event_type":"text-gen')).toEqual([{ event: null, data: '{"event_type":"stream-start"}' }]);
    expect(parser.push('eration"}\n')).toEqual([{ event: null, data: '{"event_type":"text-generation"}' }]);
  });

  it('gives an event cut short by the end of the stream', () => {
    const parser = new SseParser();
    expect(parser.push('data: last')).toEqual([]);
    expect(parser.end()).toEqual([{ event: null, data: 'last' }]);
  });
});

describe('sseTransform', () => {
  it('keeps a character split between two chunks whole', async () => {
    const stream = sseTransform((event) => [event.data], () => ['[DONE]']);
    const bytes = Buffer.from('data: é\n\n');
    const out: string[] = [];
    stream.on('data', (c: Buffer) => out.push(c.toString()));
    stream.write(bytes.subarray(0, 7));
    stream.end(bytes.subarray(7));
    await new Promise((resolve) => stream.on('end', resolve));
    expect(out.join('')).toBe('data: é\n\ndata: [DONE]\n\n');
  });
});
