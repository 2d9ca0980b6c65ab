import { Errors, HttpError } from '@gatehouse/core';
import type { Request, Response } from 'express';
import { param, type AdminContext } from '../http/context';

/** Where a log-level change applies: this node, every node on the bus, or every control plane on it. */
export type LogLevelScope = 'node' | 'cluster' | 'control_planes';

/** The node's log level, and the bus that carries a change to the others (provided by whoever runs the node). */
export interface LogLevelControl {
  /** Kong's level names this node accepts (debug … emerg) */
  levels: readonly string[];
  current(): string;
  /** applies the level here, then (scope other than `node`) to the other nodes the scope names */
  change(level: string, timeoutSeconds: number, scope: LogLevelScope): Promise<void>;
  /** DB-less nodes refuse a change, as Kong does */
  databaseOff?: boolean;
}

const DEFAULT_TIMEOUT = 60;

/** `timeout` from the query string or the body; Kong's default (60 s) when absent or not a number; rounded up. */
function timeoutOf(req: Request): number {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const raw = req.query.timeout ?? body.timeout;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  return Number.isFinite(n) ? Math.ceil(n) : DEFAULT_TIMEOUT;
}

/**
 * Kong's dynamic log level: `GET /debug/node/log-level`, `PUT /debug/node/log-level/{level}` (this node),
 * `PUT /debug/cluster/log-level/{level}` (every node: control planes and data planes) and
 * `PUT /debug/cluster/control-planes-nodes/log-level/{level}` (every control plane); `timeout` seconds (default 60)
 * before the configured level comes back, 0 for none.
 */
export function mountLogLevelRoutes(ctx: AdminContext, control: LogLevelControl): void {
  const put = (scope: LogLevelScope) => async (req: Request, res: Response) => {
    if (control.databaseOff) throw new HttpError(405, 'cannot change log level when not using a database');
    const level = param(req, 'level');
    if (!control.levels.includes(level)) throw Errors.badRequest(`unknown log level: ${level}`);
    const timeout = timeoutOf(req);
    if (timeout < 0) throw Errors.badRequest('timeout must be greater than or equal to 0');
    if (control.current() === level) return void res.status(200).json({ message: `log level is already ${level}` });
    await control.change(level, timeout, scope);
    res.status(200).json({ message: 'log level changed' });
  };
  ctx.resources.add('/debug/node/log-level', { get: (_req, res) => void res.status(200).json({ message: `log level: ${control.current()}` }) });
  ctx.resources.add('/debug/node/log-level/:level', { put: put('node') });
  ctx.resources.add('/debug/cluster/log-level/:level', { put: put('cluster') });
  ctx.resources.add('/debug/cluster/control-planes-nodes/log-level/:level', { put: put('control_planes') });
}
