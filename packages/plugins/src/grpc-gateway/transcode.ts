import protobuf from 'protobufjs';
import { frame, MESSAGE_FRAME } from '../shared/grpc/frames';
import { encodeJson } from '../shared/grpc/json-message';
import { bindingsOf, type HttpBinding } from './bindings';

/** A REST request that cannot become a call: answered 400 with Kong's message. */
export class TranscodeRefusal extends Error {}

export interface Call {
  binding: HttpBinding;
  /** the path template's values by variable name */
  values: Record<string, unknown>;
}

/** The binding a request takes, with its path values; throws a TranscodeRefusal with Kong's messages. */
export function findCall(method: string, path: string, proto: string | null): Call {
  if (proto === null) throw new TranscodeRefusal('transcoding requests require a .proto file defining the service');
  const bindings = bindingsOf(proto).get(method);
  if (bindings === undefined) throw new TranscodeRefusal(`failed to transcode .proto file Unknown method ${JSON.stringify(method)}`);
  for (const binding of bindings) {
    const match = binding.regex.exec(path);
    if (match === null) continue;
    const values: Record<string, unknown> = {};
    binding.variables.forEach((name, i) => (values[name] = match[i + 1]));
    return { binding, values };
  }
  throw new TranscodeRefusal(`failed to transcode .proto file Unknown path ${JSON.stringify(path)}`);
}

/**
 * A query argument into the message: `a.b.c` walks message fields, an argument naming no field is left out, and a
 * boolean field is true unless the value is `0` or `false` (Kong's `add_to_table`).
 */
function addQueryArg(payload: Record<string, unknown>, name: string, value: string | string[], type: protobuf.Type): void {
  let table = payload;
  let current: protobuf.Type | null = type;
  const keys = name.split('.').filter((key) => key !== '');
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const field: protobuf.Field | undefined = current?.fields[key];
    if (field === undefined) return;
    field.resolve();
    if (i < keys.length - 1) {
      const next = table[key];
      table = (table[key] = next !== null && typeof next === 'object' && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
      current = field.resolvedType instanceof protobuf.Type ? field.resolvedType : null;
    } else {
      table[key] = field.type === 'bool' ? value !== '0' && value !== 'false' : value;
    }
  }
}

/** The gRPC request body for a call: path values, then the JSON body (by the rule's `body`) or the query string. */
export function requestBody(call: Call, body: Buffer, query: URLSearchParams): Buffer {
  const payload = { ...call.values };
  const target = call.binding.body;
  if (target !== null) {
    if (body.length > 0) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw new TranscodeRefusal(`decode json err: ${(err as Error).message}`);
      }
      if (target !== '*') payload[target] = decoded;
      // an array is a table too in Kong's Lua: it fills no field
      else if (decoded !== null && typeof decoded === 'object') {
        if (!Array.isArray(decoded)) Object.assign(payload, decoded);
      } else throw new TranscodeRefusal('body must be a table');
    }
  } else {
    for (const name of new Set(query.keys())) {
      const values = query.getAll(name);
      addQueryArg(payload, name, values.length === 1 ? values[0]! : values, call.binding.input);
    }
  }
  try {
    return frame(MESSAGE_FRAME, encodeJson(call.binding.input, payload));
  } catch {
    throw new TranscodeRefusal('failed to encode payload');
  }
}
