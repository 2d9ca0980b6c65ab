import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { Errors } from '@gatehouse/core';
import { docOf, type RouteDoc, type RouteDocs } from '../openapi/route-doc';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Handler = (req: Request, res: Response, next: NextFunction) => unknown;
export type Handlers = Partial<Record<Method, Handler>>;

interface Entry {
  path: string;
  pattern: RegExp;
  methods: Set<string>;
  /** what each method was added with, for the OpenAPI document */
  docs: Map<Method, RouteDoc | undefined>;
}

/** One registered path and its methods (HEAD left out), in registration order. */
export interface RegisteredRoute {
  path: string;
  operations: Array<{ method: Method; doc?: RouteDoc }>;
}

function patternOf(path: string): RegExp {
  const escaped = path
    .replace(/\/+$/, '')
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.startsWith('*') ? '.+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * Every admin path with its methods. Handlers go on the router as they are added; `finish()` then answers other
 * methods on known paths with 405, after every module had its chance to add methods to a path.
 */
export class ResourceRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly router: Router) {}

  add(path: string, handlers: Handlers, docs?: RouteDocs): void {
    let entry = this.entries.get(path);
    if (!entry) {
      entry = { path, pattern: patternOf(path), methods: new Set(), docs: new Map() };
      this.entries.set(path, entry);
    }
    for (const [method, handler] of Object.entries(handlers) as Array<[Method, Handler]>) {
      if (!handler) continue;
      // a path and method registered twice (a module's own handler before the generated one): the first handler
      // answers, as Express would route it, and the operation is documented once, by the first that describes it
      if (entry.docs.has(method)) {
        if (entry.docs.get(method) === undefined) entry.docs.set(method, docOf(docs, method));
        continue;
      }
      entry.methods.add(method.toUpperCase());
      entry.docs.set(method, docOf(docs, method));
      if (method === 'get') entry.methods.add('HEAD');
      this.router[method](path, handler as RequestHandler);
    }
  }

  /** methods allowed on the path, or null for an unknown path */
  methodsFor(path: string): string[] | null {
    for (const entry of this.entries.values()) if (entry.pattern.test(path)) return [...entry.methods];
    return null;
  }

  /** every registered path with its operations: what the OpenAPI document describes */
  routes(): RegisteredRoute[] {
    return [...this.entries.values()].map((entry) => ({
      path: entry.path,
      operations: [...entry.docs].map(([method, doc]) => ({ method, doc })),
    }));
  }

  finish(): void {
    for (const entry of this.entries.values()) {
      this.router.all(entry.path, (_req, _res, next) => next(Errors.methodNotAllowed()));
    }
  }
}
