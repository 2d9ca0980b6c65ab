/** The stream subsystem's counters, as nginx's stub status gives them for Kong's `subsystem="stream"` series. */
export interface StreamStats {
  /** TCP/TLS connections accepted and UDP sessions opened */
  connections_accepted: number;
  connections_handled: number;
  /** open now */
  connections_active: number;
  /** sessions relayed to an upstream (a route matched, the upstream was reached) */
  total_requests: number;
}

export class StreamCounters {
  readonly stats: StreamStats = { connections_accepted: 0, connections_handled: 0, connections_active: 0, total_requests: 0 };

  /** a connection or UDP session opened; the returned function is called once when it ends */
  opened(): () => void {
    this.stats.connections_accepted++;
    this.stats.connections_handled++;
    this.stats.connections_active++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.stats.connections_active--;
    };
  }

  relayed(): void {
    this.stats.total_requests++;
  }
}
