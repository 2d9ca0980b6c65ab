import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { Errors } from '@gatehouse/core';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Handler = (req: Request, res: Response, next: NextFunction) => unknown;
export type Handlers = Partial<Record<Method, Handler>>;

interface Entry {
  path: string;
  pattern: RegExp;
  methods: Set<string>;
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

  add(path: string, handlers: Handlers): void {
    let entry = this.entries.get(path);
    if (!entry) {
      entry = { path, pattern: patternOf(path), methods: new Set() };
      this.entries.set(path, entry);
    }
    for (const [method, handler] of Object.entries(handlers) as Array<[Method, Handler]>) {
      if (!handler) continue;
      entry.methods.add(method.toUpperCase());
      if (method === 'get') entry.methods.add('HEAD');
      this.router[method](path, handler as RequestHandler);
    }
  }

  /** methods allowed on the path, or null for an unknown path */
  methodsFor(path: string): string[] | null {
    for (const entry of this.entries.values()) if (entry.pattern.test(path)) return [...entry.methods];
    return null;
  }

  finish(): void {
    for (const entry of this.entries.values()) {
      this.router.all(entry.path, (_req, _res, next) => next(Errors.methodNotAllowed()));
    }
  }
}
