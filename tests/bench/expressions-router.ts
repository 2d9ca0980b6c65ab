// The expressions router's match cost (issue 26): 10,000 expression routes (router_flavor = expressions) against the
// same 10,000 routes written with traditional fields, matched with the same requests, in this process, in alternating
// rounds (traditional, expressions, expressions, traditional, …), timed by this process's CPU time. The five route
// shapes are the `router` scenario's (plain hosts with prefixes, prefixes alone, wildcard hosts, host prefixes with
// methods, prefixes with header values), each written once as fields and once as an ATC expression, plus 20 regex
// routes in both. Printed: nanoseconds per match for each and their ratio (target ≤ 1.5×).
import type { Route } from '@gatehouse/core';
import { compile, type RequestFacts, type Router } from '@gatehouse/data-plane';
import { makeExpressionRoute, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { median, nsPerMatch, type Request } from './router';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const MATCHES_PER_ROUND = Number(process.env.BENCH_ROUTER_MATCHES ?? 400_000);
const REGEX_ROUTES = 20;

const pad = (i: number) => String(i).padStart(5, '0');

/** route i as traditional fields and as the expression Kong would match the same requests with */
function shapes(i: number): { fields: Record<string, unknown>; expression: string } {
  switch (i % 5) {
    case 0:
      return {
        fields: { hosts: [`svc-${pad(i)}.example.com`], paths: [`/api/v${i % 3}`] },
        expression: `http.host == "svc-${pad(i)}.example.com" && http.path ^= "/api/v${i % 3}"`,
      };
    case 1:
      return { fields: { paths: [`/team-${pad(i)}/orders`] }, expression: `http.path ^= "/team-${pad(i)}/orders"` };
    case 2:
      return {
        fields: { hosts: [`*.tenant-${pad(i)}.example.net`], paths: ['/'] },
        expression: `http.host =^ ".tenant-${pad(i)}.example.net" && http.path ^= "/"`,
      };
    case 3:
      return {
        fields: { hosts: [`app-${pad(i)}.*`], methods: ['GET', 'POST'], paths: [`/v${i % 7}`] },
        expression: `http.host ^= "app-${pad(i)}." && (http.method == "GET" || http.method == "POST") && http.path ^= "/v${i % 7}"`,
      };
    default:
      return {
        fields: { paths: [`/shop-${pad(i)}`], headers: { 'x-version': ['v1', 'v2'] } },
        expression: `http.path ^= "/shop-${pad(i)}" && (lower(http.headers.x_version) == "v1" || lower(http.headers.x_version) == "v2")`,
      };
  }
}

function requestFor(i: number): Request {
  switch (i % 5) {
    case 0:
      return { method: 'GET', host: `svc-${pad(i)}.example.com`, path: `/api/v${i % 3}/items/42`, headers: {} };
    case 1:
      return { method: 'POST', host: 'gateway.test', path: `/team-${pad(i)}/orders/7`, headers: {} };
    case 2:
      return { method: 'GET', host: `eu.tenant-${pad(i)}.example.net`, path: '/status', headers: {} };
    case 3:
      return { method: 'GET', host: `app-${pad(i)}.example.org`, path: `/v${i % 7}/x`, headers: {} };
    default:
      return { method: 'GET', host: 'gateway.test', path: `/shop-${pad(i)}/cart`, headers: { 'x-version': 'v2' } };
  }
}

function routerOf(n: number, expressions: boolean): Router {
  const service = makeService({ name: 'bench', url: 'http://upstream.test' });
  const routes: Route[] = [];
  for (let i = 0; i < n; i++) {
    const { fields, expression } = shapes(i);
    routes.push(expressions ? makeExpressionRoute({ name: `r${i}`, service: { id: service.id }, expression }) : makeRoute({ name: `r${i}`, service: { id: service.id }, ...fields }));
  }
  for (let i = 0; i < REGEX_ROUTES; i++) {
    const name = `regex-${i}`;
    routes.push(
      expressions
        ? makeExpressionRoute({ name, service: { id: service.id }, expression: `http.path ~ r#"^/regex-${i}/\\d+$"#` })
        : makeRoute({ name, service: { id: service.id }, paths: [`~/regex-${i}/\\d+$`] }),
    );
  }
  return compile(makeSnapshot({ services: [service], routes })).router;
}

/** 1,000 requests spread over the table, 1 in 10 a miss */
function requests(n: number): Request[] {
  const out: Request[] = [];
  for (let k = 0; k < 1000; k++) out.push(k % 10 === 9 ? { method: 'GET', host: 'nowhere.test', path: `/missing/${k}`, headers: {} } : requestFor((k * 7919) % n));
  return out;
}

/** the facts of a request as the proxy builds them, once per match */
const factsOf = (): RequestFacts => ({ scheme: 'http', query: '', remoteAddress: '127.0.0.1', remotePort: 50000, localAddress: '127.0.0.1', localPort: 8000 });

export interface ExpressionsRouterBench {
  routes: number;
  traditionalNs: number;
  expressionsNs: number;
}

export function measureExpressionsRouter(n = Number(process.env.BENCH_ROUTER_N ?? 10_000)): ExpressionsRouterBench {
  const traditional = routerOf(n, false);
  const expressions = routerOf(n, true);
  const batch = requests(n);
  // every request answers the same route (by name) through both
  for (const r of batch) {
    const facts: RequestFacts = { scheme: 'http', query: '' };
    const a = traditional.match(r.method, r.host, r.path, r.headers, 8000)?.route.route.name ?? null;
    const b = expressions.match(r.method, r.host, r.path, r.headers, 8000, undefined, facts)?.route.route.name ?? null;
    if (a !== b) throw new Error(`${r.host}${r.path}: traditional ${a}, expressions ${b}`);
  }
  nsPerMatch(traditional, batch, MATCHES_PER_ROUND / 4, traditional.usesExpressions ? factsOf : undefined);
  nsPerMatch(expressions, batch, MATCHES_PER_ROUND / 4, expressions.usesExpressions ? factsOf : undefined);
  const tRounds: number[] = [];
  const eRounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [traditional, expressions] : [expressions, traditional];
    for (const router of order) (router === traditional ? tRounds : eRounds).push(nsPerMatch(router, batch, MATCHES_PER_ROUND, router.usesExpressions ? factsOf : undefined));
  }
  return { routes: n, traditionalNs: median(tRounds), expressionsNs: median(eRounds) };
}

export function printExpressionsRouter(r: ExpressionsRouterBench): void {
  console.log(
    `\nexpressions router (median of ${ROUNDS} alternating rounds of ${MATCHES_PER_ROUND} matches, ${REGEX_ROUTES} regex routes in both), CPU time: ` +
      `${r.routes} traditional routes ${r.traditionalNs.toFixed(0)} ns/match, ${r.routes} expression routes ${r.expressionsNs.toFixed(0)} ns/match: ` +
      `${(r.expressionsNs / r.traditionalNs).toFixed(2)}× (target ≤ 1.5×)`,
  );
}
