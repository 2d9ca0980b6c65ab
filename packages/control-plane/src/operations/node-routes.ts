import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { HttpError } from '@gatehouse/core';
import { dnsStatistics } from '@gatehouse/data-plane';
import { param, type AdminContext } from '../http/context';

/** A path template as Kong's `/endpoints` lists it: `{name}` parameters named after the collection before them. */
export function kongTemplate(path: string): string {
  const parts = path.split('/');
  return parts.map((part, i) => (part.startsWith(':') ? `{${(parts[i - 1] ?? part.slice(1)).replace(/-/g, '_')}}` : part)).join('/');
}

/** Kong's order: segment by segment (`/a`, `/a/z`, `/ab`). */
function bySegments(a: string, b: string): number {
  const x = a.replace(/\//g, '\u0000');
  const y = b.replace(/\//g, '\u0000');
  return x < y ? -1 : x > y ? 1 : 0;
}

const WASM_OFF = 'this endpoint is only available when wasm is enabled';
const WASM_PATHS = [
  '/filter-chains',
  '/filter-chains/:filter_chains',
  '/filter-chains/:filter_chains/route',
  '/filter-chains/:filter_chains/service',
  '/routes/:routes/filter-chains',
  '/routes/:routes/filter-chains/:filter_chains',
  '/services/:services/filter-chains',
  '/services/:services/filter-chains/:filter_chains',
  '/routes/:routes/filters/enabled',
  '/routes/:routes/filters/disabled',
  '/routes/:routes/filters/all',
];

/** the event loop's delay since the node started, for /timers */
let loopDelay: ReturnType<typeof monitorEventLoopDelay> | null = null;

function timerStats(): Record<string, unknown> {
  loopDelay ??= monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const pending = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const ms = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 1e4) / 100 : 0);
  const utilization = performance.eventLoopUtilization();
  return {
    worker: { id: 0, count: 1 },
    stats: {
      sys: { running: 0, runs: loopDelay.count, pending, waiting: 0, total: pending },
      timers: {},
      flamegraph: { running: '', pending: '', elapsed_time: '' },
      event_loop: {
        delay_ms: { min: ms(loopDelay.min), max: ms(loopDelay.max), mean: ms(loopDelay.mean), p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)) },
        utilization: Math.round(utilization.utilization * 1e4) / 1e4,
      },
    },
  };
}

/**
 * Kong's node paths: `/endpoints` (every path template, Kong's order), `/timers` (Kong's shape; `sys.pending` counts
 * the process's timers, `event_loop` adds Node's loop delay and utilisation), `/status/dns` (Kong's new DNS client's
 * statistics, per `name|TYPE`, of this process's lookups: the balancers of the data plane it runs, if any), and the WebAssembly filter-chain paths answering as Kong does with `wasm = off`.
 */
export function mountNodeRoutes(ctx: AdminContext): void {
  loopDelay ??= monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  ctx.resources.add('/endpoints', {
    get: (_req, res) => {
      const templates = [...new Set(ctx.resources.routes().map((r) => kongTemplate(r.path)))].sort(bySegments);
      res.status(200).json({ data: templates });
    },
  });
  ctx.resources.add('/timers', { get: (_req, res) => void res.status(200).json(timerStats()) });
  ctx.resources.add('/status/dns', { get: (_req, res) => void res.status(200).json({ worker: { id: 0, count: 1 }, stats: dnsStatistics() }) });
  const refuse = () => {
    throw new HttpError(400, WASM_OFF);
  };
  for (const path of WASM_PATHS) ctx.resources.add(path, { get: refuse, post: refuse, put: refuse, patch: refuse, delete: refuse });
  ctx.resources.add('/schemas/filters/:name', {
    get: (req) => {
      throw new HttpError(404, `Filter '${param(req, 'name')}' not found`);
    },
  });
}
