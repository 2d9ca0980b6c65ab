// The time from an admin write to the change being served by every data plane of a cluster
// (control plane + 2 data planes over Redis and Postgres, as processes).
import { adminClient, startTopology } from '../e2e/support/topology';

export interface PropagationResult {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export async function measurePropagation(upstreamUrl: string, samples = 20): Promise<PropagationResult> {
  const topology = await startTopology('cluster', { dataPlanes: 2, env: { GATEHOUSE_LOG_LEVEL: 'error' } });
  try {
    const admin = adminClient(topology.adminUrl);
    await admin.post('/services/', { name: 'propagation', url: upstreamUrl });
    await topology.converge();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const path = `/p${i}`;
      const started = performance.now();
      const created = await admin.post('/services/propagation/routes', { 'paths[]': path });
      if (created.status !== 201) throw new Error(`route create answered ${created.status}`);
      await Promise.all(
        topology.dataPlanes.map(async (dp) => {
          for (;;) {
            const res = await fetch(`${dp.proxyUrl}${path}`);
            await res.arrayBuffer();
            if (res.status !== 404) return;
            await new Promise((r) => setTimeout(r, 2));
          }
        }),
      );
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
    return { samples, p50: at(0.5), p99: at(0.99), max: times[times.length - 1]! };
  } finally {
    await topology.stop();
  }
}
