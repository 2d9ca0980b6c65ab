// Router match cost against the number of routes (issue 31): the same mix of requests matched against 100 routes and
// against 10,000 (BENCH_ROUTER_SMALL / BENCH_ROUTER_N), in this process, in alternating rounds (small, large, large,
// small, …) so a change of the machine's load weighs on both alike, timed by this process's CPU time. The routes are what a large gateway holds: plain
// hosts with prefixes, prefixes alone, wildcard hosts with and without a port, methods and headers on some; a few
// regex routes, whose number does not grow with N. Printed: nanoseconds per match at each size and their ratio
// (target: flat, ≈ 1×, for hosts and prefixes).
import type { Route } from '@gatehouse/core';
import { compile, type RequestFacts, type Router } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const MATCHES_PER_ROUND = Number(process.env.BENCH_ROUTER_MATCHES ?? 400_000);

export interface Request {
  method: string;
  host: string;
  path: string;
  headers: Record<string, string>;
}

/**
 * Names carry the route number padded to five digits, so both tables have prefixes and hosts of the same lengths: the
 * lookups a match makes grow with the number of distinct lengths (at most the longest path), not with the routes.
 */
const pad = (i: number) => String(i).padStart(5, '0');

/** route i of a table of n: one of five shapes, each over its own names */
function routeFields(i: number): Record<string, unknown> {
  switch (i % 5) {
    case 0:
      return { hosts: [`svc-${pad(i)}.example.com`], paths: [`/api/v${i % 3}`, `/api/v${i % 3}/items`] };
    case 1:
      return { paths: [`/team-${pad(i)}/orders`] };
    case 2:
      return { hosts: [`*.tenant-${pad(i)}.example.net`], paths: ['/'] };
    case 3:
      return { hosts: [`app-${pad(i)}.*:8443`], methods: ['GET', 'POST'], paths: [`/v${i % 7}`] };
    default:
      return { paths: [`/shop-${pad(i)}`], headers: { 'x-version': ['v1', 'v2'] } };
  }
}

/** a request for route i, or one that misses when i is past the table */
function requestFor(i: number): Request {
  switch (i % 5) {
    case 0:
      return { method: 'GET', host: `svc-${pad(i)}.example.com`, path: `/api/v${i % 3}/items/42`, headers: {} };
    case 1:
      return { method: 'POST', host: 'gateway.test', path: `/team-${pad(i)}/orders/7`, headers: {} };
    case 2:
      return { method: 'GET', host: `eu.tenant-${pad(i)}.example.net`, path: '/status', headers: {} };
    case 3:
      return { method: 'GET', host: `app-${pad(i)}.example.org:8443`, path: `/v${i % 7}/x`, headers: {} };
    default:
      return { method: 'GET', host: 'gateway.test', path: `/shop-${pad(i)}/cart`, headers: { 'x-version': 'v2' } };
  }
}

const REGEX_ROUTES = 20;

function routerOf(n: number): Router {
  const service = makeService({ name: 'bench', url: 'http://upstream.test' });
  const routes: Route[] = [];
  for (let i = 0; i < n; i++) routes.push(makeRoute({ service: { id: service.id }, ...routeFields(i) }));
  for (let i = 0; i < REGEX_ROUTES; i++) routes.push(makeRoute({ service: { id: service.id }, paths: [`~/regex-${i}/\\d+$`] }));
  return compile(makeSnapshot({ services: [service], routes })).router;
}

/** 1,000 requests spread over the routes of the small table (so both sizes answer the same requests), 1 in 10 a miss */
function requests(small: number): Request[] {
  const out: Request[] = [];
  for (let k = 0; k < 1000; k++) {
    out.push(k % 10 === 9 ? { method: 'GET', host: 'nowhere.test', path: `/missing/${k}`, headers: {} } : requestFor((k * 7) % small));
  }
  return out;
}

/**
 * CPU time of this process per match (ns): what other processes on the machine do does not count in it. `factsOf`
 * builds the request facts an expressions router reads, per match, as the proxy builds them.
 */
export function nsPerMatch(router: Router, batch: Request[], count: number, factsOf?: () => RequestFacts): number {
  let found = 0;
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const r = batch[i % batch.length]!;
    if (router.match(r.method, r.host, r.path, r.headers, 8000, undefined, factsOf?.()) !== null) found++;
  }
  const spent = process.cpuUsage(started);
  if (found === 0) throw new Error('no request matched');
  return ((spent.user + spent.system) * 1000) / count;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface RouterBench {
  small: number;
  large: number;
  smallNs: number;
  largeNs: number;
}

export function measureRouter(small = Number(process.env.BENCH_ROUTER_SMALL ?? 100), large = Number(process.env.BENCH_ROUTER_N ?? 10_000)): RouterBench {
  const smallRouter = routerOf(small);
  const largeRouter = routerOf(large);
  const batch = requests(small);
  // every request answers the same route at both sizes
  for (const r of batch) {
    const a = smallRouter.match(r.method, r.host, r.path, r.headers, 8000)?.route.route.paths;
    const b = largeRouter.match(r.method, r.host, r.path, r.headers, 8000)?.route.route.paths;
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${r.host}${r.path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  nsPerMatch(smallRouter, batch, MATCHES_PER_ROUND / 4);
  nsPerMatch(largeRouter, batch, MATCHES_PER_ROUND / 4);
  const smallRounds: number[] = [];
  const largeRounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [smallRouter, largeRouter] : [largeRouter, smallRouter];
    for (const router of order) (router === smallRouter ? smallRounds : largeRounds).push(nsPerMatch(router, batch, MATCHES_PER_ROUND));
  }
  return { small, large, smallNs: median(smallRounds), largeNs: median(largeRounds) };
}

export function printRouter(r: RouterBench): void {
  console.log(
    `\nrouter match (median of ${ROUNDS} alternating rounds of ${MATCHES_PER_ROUND} matches, ${REGEX_ROUTES} regex routes in both), CPU time: ` +
      `${r.small} routes ${r.smallNs.toFixed(0)} ns/match, ${r.large} routes ${r.largeNs.toFixed(0)} ns/match: ` +
      `${(r.largeNs / r.smallNs).toFixed(2)}× at ${r.large} routes (target ≈ 1×, flat in the number of routes)`,
  );
}
