// deploy/k8s and docker-compose.yml: the kustomization's resources exist and every manifest validates against the
// Kubernetes JSON schemas (kubernetes-models, no download); probes use the status listeners; data planes have an
// autoscaler, a disruption budget, a locked-down container and scrape annotations. When kubectl is installed, its
// own `kubectl kustomize` rendering must give the same objects.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments, parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const K8S = join(ROOT, 'deploy/k8s');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: any };

const VALIDATORS: Record<string, (m: Manifest) => { validate(): void }> = {
  'apps/v1/Deployment': (m) => new Deployment(m as never),
  'autoscaling/v2/HorizontalPodAutoscaler': (m) => new HorizontalPodAutoscaler(m as never),
  'policy/v1/PodDisruptionBudget': (m) => new PodDisruptionBudget(m as never),
  'v1/Service': (m) => new Service(m as never),
  'v1/ConfigMap': (m) => new ConfigMap(m as never),
  'v1/Secret': (m) => new Secret(m as never),
};

/** what `kubectl kustomize` renders for this kustomization (plain resources list, no transformers) */
function renderKustomization(): Manifest[] {
  const kustomization = parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.flatMap((file) => {
    expect(existsSync(join(K8S, file))).toBe(true);
    return parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((d) => d.toJSON() as Manifest).filter(Boolean);
  });
}

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('deploy/k8s', () => {
  const manifests = renderKustomization();
  const find = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name)!;

  it('validates every manifest against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(8);
    for (const m of manifests) {
      const make = VALIDATORS[`${m.apiVersion}/${m.kind}`];
      expect(make).toBeDefined();
      expect(() => make!(m).validate()).not.toThrow();
    }
  });

  it('renders the same objects with kubectl kustomize, when kubectl is installed', () => {
    const ours = manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    if (!hasKubectl()) {
      // without kubectl, the rendering above stands: every listed file exists and parses
      expect(ours.length).toBe(manifests.length);
      return;
    }
    const rendered = parseAllDocuments(execFileSync('kubectl', ['kustomize', K8S], { encoding: 'utf8' })).map((d) => d.toJSON() as Manifest);
    expect(rendered.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(ours);
  });

  it('probes the control plane on its status listener (no RBAC) and data planes on theirs', () => {
    const cp = find('Deployment', 'gatehouse-control-plane').spec.template.spec.containers[0];
    expect(cp.env).toEqual(expect.arrayContaining([{ name: 'GATEHOUSE_STATUS_LISTEN', value: '0.0.0.0:8100' }]));
    expect(cp.readinessProbe.httpGet).toEqual({ path: '/status/ready', port: 'status' });
    expect(cp.livenessProbe.httpGet).toEqual({ path: '/status', port: 'status' });
    expect(cp.ports).toEqual(expect.arrayContaining([{ name: 'status', containerPort: 8100 }]));
    const dp = find('Deployment', 'gatehouse-data-plane').spec.template.spec.containers[0];
    expect(dp.readinessProbe.httpGet).toEqual({ path: '/status/ready', port: 'status' });
  });

  it('locks every container down and gives it writable data and temporary directories only', () => {
    for (const name of ['gatehouse-control-plane', 'gatehouse-data-plane']) {
      const pod = find('Deployment', name).spec.template;
      expect(pod.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8100', 'prometheus.io/path': '/metrics' });
      expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
      for (const c of pod.spec.containers) {
        expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
        const mounts = c.volumeMounts.map((v: { mountPath: string }) => v.mountPath).sort();
        expect(mounts).toEqual(['/tmp', '/var/lib/gatehouse']);
        for (const v of c.volumeMounts) expect(pod.spec.volumes.find((x: { name: string }) => x.name === v.name).emptyDir).toEqual({});
      }
    }
  });

  it('autoscales data planes and keeps one through disruptions', () => {
    const hpa = find('HorizontalPodAutoscaler', 'gatehouse-data-plane');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gatehouse-data-plane' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const pdb = find('PodDisruptionBudget', 'gatehouse-data-plane');
    const labels = find('Deployment', 'gatehouse-data-plane').spec.template.metadata.labels;
    expect(pdb.spec.selector.matchLabels).toEqual(labels);
    expect(pdb.spec.minAvailable).toBe(1);
  });

  it('runs two control planes by default', () => {
    expect(find('Deployment', 'gatehouse-control-plane').spec.replicas).toBe(2);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, any> };

  it('probes the control plane\'s readiness on its status listener, the data planes on theirs', () => {
    const cp = compose.services['control-plane'];
    expect(cp.environment.GATEHOUSE_STATUS_LISTEN).toBe('0.0.0.0:8100');
    expect(cp.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8100/status/ready');
    expect(compose.services['data-plane'].healthcheck.test.join(' ')).toContain('http://127.0.0.1:8100/status/ready');
  });

  it('runs two control planes on the one database, the second sharing the first one\'s keyring', () => {
    const merged = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };
    const [one, two] = [merged.services['control-plane'], merged.services['control-plane-2']];
    expect(two.command).toEqual(['control-plane']);
    expect(two.environment).toEqual(one.environment);
    expect(two.volumes).toEqual(one.volumes);
    expect(two.ports).toEqual(['127.0.0.1:8002:8001', '127.0.0.1:8101:8100']);
    expect(two.depends_on).toEqual({ 'control-plane': { condition: 'service_healthy' } });
  });
});

describe('stream listeners in the manifests', () => {
  const STREAM_LISTEN = '0.0.0.0:5555, 0.0.0.0:5556 ssl, 0.0.0.0:5557 udp';
  const STREAM = join(ROOT, 'deploy/k8s-stream');

  it('deploy/k8s-stream opens the stream listeners on the data planes and publishes them in a Service', () => {
    const service = parse(readFileSync(join(STREAM, 'stream-service.yaml'), 'utf8')) as Manifest;
    const patch = parse(readFileSync(join(STREAM, 'data-plane-stream.yaml'), 'utf8')) as Manifest;
    // with kubectl, its rendering of the overlay (the base and the patch merged) is what is checked
    const rendered = hasKubectl() ? parseAllDocuments(execFileSync('kubectl', ['kustomize', STREAM], { encoding: 'utf8' })).map((d) => d.toJSON() as Manifest) : [service, patch];
    const dp = rendered.find((m) => m.kind === 'Deployment' && m.metadata.name === 'gatehouse-data-plane')!;
    const container = dp.spec.template.spec.containers.find((c: { name: string }) => c.name === 'data-plane');
    expect(container.env).toEqual(expect.arrayContaining([{ name: 'GATEHOUSE_STREAM_LISTEN', value: STREAM_LISTEN }]));
    expect(container.ports).toEqual(
      expect.arrayContaining([
        { name: 'stream-tcp', containerPort: 5555, protocol: 'TCP' },
        { name: 'stream-tls', containerPort: 5556, protocol: 'TCP' },
        { name: 'stream-udp', containerPort: 5557, protocol: 'UDP' },
      ]),
    );
    const svc = rendered.find((m) => m.kind === 'Service' && m.metadata.name === 'gatehouse-stream')!;
    expect(() => new Service(svc as never).validate()).not.toThrow();
    if (hasKubectl()) expect(() => new Deployment(dp as never).validate()).not.toThrow();
    expect(svc.spec.ports.map((p: { targetPort: string; protocol: string }) => `${p.targetPort}/${p.protocol}`)).toEqual(['stream-tcp/TCP', 'stream-tls/TCP', 'stream-udp/UDP']);
    expect(svc.spec.selector).toEqual(find('Deployment', 'gatehouse-data-plane').spec.template.metadata.labels);
  });

  it('docker-compose.stream.yml sets GATEHOUSE_STREAM_LISTEN on the data planes and publishes its ports', () => {
    const stream = parse(readFileSync(join(ROOT, 'docker-compose.stream.yml'), 'utf8')) as { services: Record<string, any> };
    const dp = stream.services['data-plane'];
    expect(dp.environment.GATEHOUSE_STREAM_LISTEN).toBe(`\${GATEHOUSE_STREAM_LISTEN:-${STREAM_LISTEN}}`);
    expect(dp.ports).toEqual(['5555', '5556', '5557/udp']);
  });
});

/** a manifest of deploy/k8s by kind and name */
function find(kind: string, name: string): Manifest {
  return renderKustomization().find((m) => m.kind === kind && m.metadata.name === name)!;
}
