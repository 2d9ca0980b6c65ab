import type { BalancerRegistry } from '../balancer/registry';
import type { ConfigHolder } from '../config-holder';
import type { Forwarder } from '../proxy/forwarder';
import type { GrpcForwarder } from '../grpc/grpc-forwarder';

/**
 * Pools of upstreams that left the configuration are closed once their requests finish: on each config swap, the
 * forwarders keep the pools of the services' addresses (and of their upstreams' addresses) and drop the others.
 * Register after the balancers follow the swap: the addresses are read from them. Returns the unsubscribe.
 */
export function pruneOnSwap(holder: ConfigHolder, balancers: BalancerRegistry, forwarder: Forwarder, grpcForwarder: GrpcForwarder): () => void {
  return holder.onSwap((next) => {
    const active = new Set<string>();
    for (const route of next.routes) {
      const service = route.upstream;
      if (!service) continue;
      if (service.balancer === null) {
        active.add(service.poolKey);
        continue;
      }
      const balancer = balancers.get(service.balancer);
      for (const address of balancer?.addresses ?? []) active.add(address.forwardTarget(service, balancer!.spec.hostHeader).poolKey);
    }
    forwarder.prune?.(active);
    grpcForwarder.prune(active);
  });
}
