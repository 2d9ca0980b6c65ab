// deploy/k8s/dbless: DB-less data planes reading kong.yml from a ConfigMap. Every manifest validates against the
// Kubernetes schemas, the file mounted is the one GATEHOUSE_DECLARATIVE_CONFIG names, and the example kong.yml loads.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { flattenDocument, offlineDocumentKinds, parseDocumentText, validateDocument } from '@gatehouse/control-plane';
import { bundledPlugins } from '@gatehouse/plugins';

const DIR = join(fileURLToPath(new URL('../../', import.meta.url)), 'deploy/k8s/dbless');

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec?: any;
}

const manifests = parseAllDocuments(readFileSync(join(DIR, 'data-plane.yaml'), 'utf8')).map((d) => d.toJSON() as Manifest);

describe('deploy/k8s/dbless', () => {
  it('validates against the Kubernetes schemas', () => {
    expect(manifests.map((m) => m.kind).sort()).toEqual(['Deployment', 'Service']);
    for (const m of manifests) expect(() => (m.kind === 'Deployment' ? new Deployment(m as never) : new Service(m as never)).validate()).not.toThrow();
  });

  it('runs data planes without a database on the file the ConfigMap mounts', () => {
    const pod = manifests.find((m) => m.kind === 'Deployment')!.spec.template.spec;
    const container = pod.containers[0];
    const env = Object.fromEntries(container.env.filter((e: { value?: string }) => e.value !== undefined).map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(container.args).toEqual(['data-plane']);
    expect(env.GATEHOUSE_DATABASE).toBe('off');
    expect(env).not.toHaveProperty('REDIS_URL');
    const mount = container.volumeMounts.find((v: { name: string }) => v.name === 'declarative');
    expect(join(mount.mountPath, 'kong.yml')).toBe(env.GATEHOUSE_DECLARATIVE_CONFIG);
    const volume = pod.volumes.find((v: { name: string }) => v.name === 'declarative');
    const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as { configMapGenerator: Array<{ name: string; files: string[] }> };
    expect(kustomization.configMapGenerator).toEqual([{ name: volume.configMap.name, files: ['kong.yml'] }]);
  });

  it('the example kong.yml loads', () => {
    const doc = parseDocumentText(readFileSync(join(DIR, 'kong.yml'), 'utf8'));
    expect(validateDocument(flattenDocument(doc, offlineDocumentKinds(bundledPlugins)))).toEqual([]);
  });

  it('kubectl kustomize renders it, the ConfigMap named with its content hash', () => {
    let rendered: string;
    try {
      rendered = execFileSync('kubectl', ['kustomize', DIR], { encoding: 'utf8' });
    } catch (err) {
      // without kubectl the checks above stand
      expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
      return;
    }
    const objects = parseAllDocuments(rendered).map((d) => d.toJSON() as Manifest);
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    expect(configMap.metadata.name).toMatch(/^gatehouse-declarative-[a-z0-9]+$/);
    const pod = objects.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    expect(pod.volumes.find((v: { name: string }) => v.name === 'declarative').configMap.name).toBe(configMap.metadata.name);
  });
});
