// `POST /config` at the admin request bounds (decision 26): the largest document the control plane takes by default
// (64 MiB) and the 100,000-consumer one, each against a fresh control plane over Postgres (with one data plane over
// Redis). Prints the control plane's peak RSS (VmHWM) against the document's size, and the longest answer of
// `/status` and of `GET /services`, asked one after the other throughout the upload, parse and apply.
import { readFileSync } from 'node:fs';
import { startTopology } from '../e2e/support/topology';
import { documentWith, peakRssMb } from './declarative';

export interface ConfigBoundsRow {
  label: string;
  documentMb: number;
  postSeconds: number;
  peakRssMb: number;
  /** the CP's resident set once the answer came and a GC had the chance to run, MiB */
  rssAfterMb: number;
  statusMaxMs: number;
  servicesMaxMs: number;
  probes: number;
}

const MIB = 1024 * 1024;

/**
 * A valid document of about `bytes` bytes: consumers carrying 200 tags of 120 characters each (a tag holds up to 128),
 * a shape that packs much text into few entities.
 */
export function documentOfSize(bytes: number): string {
  const tags = Array.from({ length: 200 }, (_, i) => `t${String(i).padStart(3, '0')}-${'x'.repeat(115)}`);
  const one = JSON.stringify({ username: 'user-000000', tags }).length + 1;
  const count = Math.floor((bytes - 200) / one);
  const consumers = Array.from({ length: count }, (_, i) => ({ username: `user-${String(i).padStart(6, '0')}`, tags }));
  return JSON.stringify({ _format_version: '3.0', services: [{ name: 'bench', url: 'http://127.0.0.1:9' }], consumers });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** asks `url` again and again, one request at a time, until `stop` says so; the longest answer time, in ms */
async function probe(url: string, stop: () => boolean): Promise<{ maxMs: number; count: number }> {
  let maxMs = 0;
  let count = 0;
  while (!stop()) {
    const started = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    maxMs = Math.max(maxMs, performance.now() - started);
    count++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { maxMs, count };
}

async function measureOne(label: string, doc: string): Promise<ConfigBoundsRow> {
  const topology = await startTopology('cluster', { dataPlanes: 1, env: { GATEHOUSE_LOG_LEVEL: 'error' } });
  try {
    const pid = topology.controlPlane.pid;
    let done = false;
    const status = probe(`${topology.adminUrl}/status`, () => done);
    const services = probe(`${topology.adminUrl}/services`, () => done);
    const started = performance.now();
    const res = await fetch(`${topology.adminUrl}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: doc });
    await res.arrayBuffer();
    const postSeconds = (performance.now() - started) / 1000;
    if (res.status !== 201) throw new Error(`POST /config answered ${res.status}`);
    // the publication that follows the write belongs to the apply too
    await topology.converge(600_000);
    done = true;
    const [s, g] = await Promise.all([status, services]);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return {
      label,
      documentMb: Buffer.byteLength(doc) / MIB,
      postSeconds,
      peakRssMb: peakRssMb(pid),
      rssAfterMb: rssMb(pid),
      statusMaxMs: s.maxMs,
      servicesMaxMs: g.maxMs,
      probes: s.count + g.count,
    };
  } finally {
    await topology.stop();
  }
}

export async function measureConfigBounds(consumers: number): Promise<ConfigBoundsRow[]> {
  return [await measureOne('64 MiB document (consumers with tags)', documentOfSize(64 * MIB - 1024)), await measureOne(`${consumers} consumers + key-auth keys`, documentWith(consumers))];
}

export function printConfigBounds(rows: ConfigBoundsRow[]): void {
  console.log('\nPOST /config at the admin bounds (CP over Postgres + 1 DP over Redis; fresh CP per document; probes one at a time, 20 ms apart):');
  console.log('  document                                   size      POST    CP peak RSS (× size)   RSS after   longest /status   longest GET /services');
  for (const r of rows) {
    console.log(
      `  ${r.label.padEnd(40)} ${r.documentMb.toFixed(1).padStart(6)} MiB ${r.postSeconds.toFixed(1).padStart(6)} s ${r.peakRssMb.toFixed(0).padStart(7)} MiB (${(r.peakRssMb / r.documentMb).toFixed(1).padStart(5)}×) ${r.rssAfterMb.toFixed(0).padStart(7)} MiB ${r.statusMaxMs.toFixed(0).padStart(11)} ms ${r.servicesMaxMs.toFixed(0).padStart(15)} ms`,
    );
  }
  console.log('  targets: peak RSS under 10× the 64 MiB document, under 600 MiB for 100,000 consumers; /status and GET /services answer throughout');
}
