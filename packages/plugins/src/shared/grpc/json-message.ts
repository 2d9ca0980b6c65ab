import protobuf from 'protobufjs';

/**
 * Messages ⇄ JSON the way Kong's lua-protobuf setup does it (kong/tools/grpc.lua): field names as in the `.proto`
 * file, enums by name, 64-bit integers as numbers, proto3 messages with every scalar field (defaults included) and
 * empty repeated fields as `[]`, unset message fields left out, `google.protobuf.Timestamp` as an ISO 8601 date
 * (`2024-05-01T12:00:00`, UTC, whole seconds), and `bytes` as their raw text.
 */

const TIMESTAMP = '.google.protobuf.Timestamp';
const NUMERIC = new Set(['double', 'float', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

export class EncodeError extends Error {}

function isProto3(type: protobuf.Type): boolean {
  return Reflect.get(type, '_edition') === 'proto3';
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

function timestampOf(value: unknown): { seconds: number; nanos: number } {
  if (typeof value !== 'string') throw new EncodeError(`expected time string, got (${typeof value})`);
  // a date without an offset is UTC, as Kong reads it
  const text = /(?:Z|[+-]\d\d:?\d\d)$/i.test(value) || !value.includes('T') ? value : `${value}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new EncodeError(`invalid time string ${JSON.stringify(value)}`);
  return { seconds: Math.floor(ms / 1000), nanos: (((ms % 1000) + 1000) % 1000) * 1e6 };
}

function scalarIn(field: protobuf.Field, value: unknown): unknown {
  if (value === null) throw new EncodeError(`${field.name}: null`);
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    if (resolved.fullName === TIMESTAMP) return timestampOf(value);
    if (typeof value !== 'object' || Array.isArray(value)) throw new EncodeError(`${field.name}: table expected`);
    return messageIn(resolved, value as Record<string, unknown>);
  }
  if (NUMERIC.has(field.type) && typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  // Lua's truth: everything but false (and nil) is true
  if (field.type === 'bool' && typeof value !== 'boolean') return true;
  if (field.type === 'bytes' && typeof value === 'string') return Buffer.from(value, 'utf8');
  return value;
}

/** The JSON value as a message object protobufjs encodes; fields the type does not have are left out. */
function messageIn(type: protobuf.Type, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = type.fields[key];
    if (field === undefined) continue;
    const item = value[key];
    if (field.map) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new EncodeError(`${key}: table expected`);
      const entries: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(item)) entries[k] = scalarIn(field, v);
      out[key] = entries;
    } else if (field.repeated) {
      if (!Array.isArray(item)) throw new EncodeError(`${key}: table expected`);
      out[key] = item.map((element) => scalarIn(field, element));
    } else {
      out[key] = scalarIn(field, item);
    }
  }
  return out;
}

/** Encodes a JSON object as `type`; throws an EncodeError when a value does not fit its field. */
export function encodeJson(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  const object = messageIn(type, value);
  const problem = type.verify(object);
  if (problem !== null) throw new EncodeError(problem);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

function valueOut(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type && value !== null && typeof value === 'object') {
    if (resolved.fullName === TIMESTAMP) return isoSeconds(Number((value as { seconds?: unknown }).seconds ?? 0));
    return messageOut(resolved, value as Record<string, unknown>);
  }
  if (field.type === 'bytes' && typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
  return value;
}

function messageOut(type: protobuf.Type, object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const field = type.fields[key];
    const value = object[key];
    if (field === undefined || value === null || value === undefined) continue;
    if (field.map) out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, valueOut(field, v)]));
    else if (field.repeated) out[key] = (value as unknown[]).map((v) => valueOut(field, v));
    else out[key] = valueOut(field, value);
  }
  return out;
}

/** Decodes one message of `type` into Kong's JSON shape. */
export function decodeToJson(type: protobuf.Type, payload: Buffer): Record<string, unknown> {
  const object = type.toObject(type.decode(payload), { defaults: isProto3(type), arrays: true, longs: Number, enums: String, bytes: String });
  return messageOut(type, object);
}
