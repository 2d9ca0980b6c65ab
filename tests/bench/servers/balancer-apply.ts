// Loads a snapshot with UPSTREAMS upstreams × TARGETS_PER targets (IP targets, round-robin) into a data plane's
// compile and balancer registry; prints `RESULT {json}` with the time of each step and the memory they hold.
import { compile, BalancerRegistry } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot, makeTarget, makeUpstream } from '@gatehouse/testkit';

const upstreamCount = Number(process.env.UPSTREAMS ?? 1000);
const perUpstream = Number(process.env.TARGETS_PER ?? 10);

function snapshotOf(withBalancing: boolean) {
  const upstreams = [];
  const targets = [];
  const services = [];
  const routes = [];
  for (let u = 0; u < upstreamCount; u++) {
    const name = `u${u}.bench`;
    if (withBalancing) {
      const upstream = makeUpstream({ name });
      upstreams.push(upstream);
      for (let t = 0; t < perUpstream; t++) targets.push(makeTarget(upstream, { target: `10.${(u >> 8) & 255}.${u & 255}.${t + 1}:8080` }));
    }
    const service = makeService({ name: `s${u}`, host: name, port: 8080 });
    services.push(service);
    routes.push(makeRoute({ paths: [`/u${u}`], service: { id: service.id } }));
  }
  return makeSnapshot({ services, routes, upstreams, targets });
}

const gc = (globalThis as { gc?: () => void }).gc;
const heap = () => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

const plain = snapshotOf(false);
const balanced = snapshotOf(true);
const base = heap();
let t0 = performance.now();
const plainCompiled = compile(plain);
const plainCompileMs = performance.now() - t0;
const plainHeap = heap() - base;

const registry = new BalancerRegistry();
t0 = performance.now();
const compiled = compile(balanced);
const compileMs = performance.now() - t0;
t0 = performance.now();
registry.update(compiled.upstreams);
const applyMs = performance.now() - t0;
const balancedHeap = heap() - base - plainHeap;
// a second snapshot with the same upstreams: the balancers carry over
const again = compile(balanced);
t0 = performance.now();
registry.update(again.upstreams);
const reapplyMs = performance.now() - t0;
registry.close();
void plainCompiled;

process.stdout.write(
  `RESULT ${JSON.stringify({ upstreams: upstreamCount, targets: upstreamCount * perUpstream, plainCompileMs, compileMs, applyMs, reapplyMs, plainHeapMb: plainHeap / 2 ** 20, balancedHeapMb: balancedHeap / 2 ** 20, gc: gc !== undefined })}\n`,
);
process.exit(0);
