import type { UpstreamTarget } from '../compile/types';
import type { Exchange } from '../pipeline/exchange';
import { isTimeout, type ForwardObserver } from '../proxy/forwarder';
import { buildUpstreamRequest, type UpstreamRequest } from '../proxy/upstream-request';
import type { ResponseInterceptor } from '../proxy/upstream-request';
import { recordLatency, type Address, type UpstreamBalancer } from './balancer';
import { classifyStatus } from './health';
import type { BalancerRegistry } from './registry';

/** Failures before any response that mean "could not talk to this address": another target may be tried. */
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/**
 * One balanced request across its attempts: counts the address's load, times the response (latency), feeds passive
 * health, and on a connection error picks another address for the service's `retries`.
 */
export class BalancedRequest implements ForwardObserver {
  private tried: Set<Address> | null = null;
  private started = Date.now();

  constructor(
    private readonly registry: BalancerRegistry,
    private readonly balancer: UpstreamBalancer,
    private address: Address,
    private readonly ex: Exchange,
    private readonly service: UpstreamTarget,
    private readonly hashKey: string | null,
    private retriesLeft: number,
    /** the plugins' response hooks, run on whichever attempt answers */
    private readonly onResponseHooks: ResponseInterceptor | null = null,
  ) {
    address.active++;
  }

  /** the request for the current address */
  request(): UpstreamRequest {
    return buildUpstreamRequest(this.ex, this.address.forwardTarget(this.service, this.balancer.spec.hostHeader), false, this.onResponseHooks);
  }

  onResponse(status: number): void {
    recordLatency(this.address, Date.now() - this.started);
    const spec = this.balancer.spec;
    if (!spec.passiveEnabled) return;
    const passive = spec.healthchecks.passive;
    const observation = classifyStatus(status, passive.healthy.http_statuses, passive.unhealthy.http_statuses);
    if (observation !== null) this.registry.passive(this.balancer, this.address, observation);
  }

  onEnd(): void {
    this.address.active--;
  }

  onFailure(err: Error, replayable: boolean): UpstreamRequest | null {
    const failed = this.address;
    failed.active--;
    const timeout = isTimeout(err);
    if (this.balancer.spec.passiveEnabled) this.registry.passive(this.balancer, failed, timeout ? 'timeout' : 'tcp_failure');
    const code = (err as { code?: unknown }).code;
    if (!replayable || this.retriesLeft <= 0 || typeof code !== 'string' || !CONNECTION_ERRORS.has(code)) return null;
    this.retriesLeft--;
    (this.tried ??= new Set()).add(failed);
    // every address tried: go round again (a single target is retried, as Kong does)
    let next = this.balancer.pick(this.hashKey, this.tried);
    if (next === null) {
      this.tried.clear();
      next = this.balancer.pick(this.hashKey, null);
    }
    if (next === null) return null;
    this.address = next;
    next.active++;
    this.started = Date.now();
    return this.request();
  }
}
