import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import protobuf from 'protobufjs';

/** One RPC of a `.proto` file: its gRPC path, message types and `google.api.http` options as written. */
export interface ProtoMethod {
  /** `/<package>.<Service>/<Method>` */
  path: string;
  input: protobuf.Type;
  output: protobuf.Type;
  /** the `(google.api.http)` option's value, nested as written; null without one */
  http: Record<string, unknown> | null;
}

export interface ProtoFile {
  methods: ProtoMethod[];
  byPath: Map<string, ProtoMethod>;
}

/**
 * google/api's annotation files declare the `(google.api.http)` option; the parser keeps option values without
 * needing their declarations, so these imports stand for empty files of that package.
 */
const DECLARATION_ONLY = new Set(['google/api/annotations.proto', 'google/api/http.proto', 'google/protobuf/descriptor.proto']);

/** Where an import is looked for, in Kong's order: beside the importing file, then the working directory. */
function locate(name: string, from: string): string | null {
  if (isAbsolute(name)) return name;
  for (const base of [dirname(from), dirname(resolve(from)), process.cwd()]) {
    const candidate = join(base, name);
    try {
      readFileSync(candidate);
      return candidate;
    } catch {
      // try the next place
    }
  }
  return null;
}

function parseInto(root: protobuf.Root, file: string, seen: Set<string>): void {
  const parsed = protobuf.parse(readFileSync(file, 'utf8'), root, { keepCase: true });
  for (const name of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (DECLARATION_ONLY.has(name)) continue;
    const common = protobuf.common.get(name);
    if (common !== null && common !== undefined) {
      root.addJSON(common.nested ?? {});
      continue;
    }
    const found = locate(name, file);
    if (found === null) throw new Error(`${file}: cannot find import "${name}"`);
    parseInto(root, found, seen);
  }
}

function collectServices(ns: protobuf.NamespaceBase, into: protobuf.Service[]): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Service) into.push(nested);
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type || nested instanceof protobuf.Service) collectServices(nested, into);
  }
}

function httpOption(method: protobuf.Method): Record<string, unknown> | null {
  for (const option of method.parsedOptions ?? []) {
    const value = (option as Record<string, unknown>)['(google.api.http)'];
    if (value !== null && typeof value === 'object') return value as Record<string, unknown>;
  }
  return null;
}

/** Parses a `.proto` file and the files it imports; throws when one cannot be read or parsed. */
export function loadProtoFile(file: string): ProtoFile {
  const root = new protobuf.Root();
  parseInto(root, file, new Set());
  root.resolveAll();
  const services: protobuf.Service[] = [];
  collectServices(root, services);
  const methods: ProtoMethod[] = [];
  for (const service of services) {
    const serviceName = service.fullName.replace(/^\./, '');
    for (const method of service.methodsArray) {
      method.resolve();
      methods.push({ path: `/${serviceName}/${method.name}`, input: method.resolvedRequestType!, output: method.resolvedResponseType!, http: httpOption(method) });
    }
  }
  return { methods, byPath: new Map(methods.map((m) => [m.path, m])) };
}

const loaded = new Map<string, ProtoFile>();

/** A `.proto` file parsed once per process, as Kong keeps it per worker (a changed file needs a restart there too). */
export function protoFile(file: string): ProtoFile {
  let known = loaded.get(file);
  if (known === undefined) {
    known = loadProtoFile(file);
    loaded.set(file, known);
  }
  return known;
}
