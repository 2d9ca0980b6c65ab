import { gunzipSync, gzipSync } from 'node:zlib';
import { openRedis } from '@gatehouse/sync';
import type { DocumentStore, StoredDocument } from '../dbless/document-store';

/**
 * The last declarative document of a database-less control plane, in Redis beside the signed snapshot
 * (`<prefix>declarative:document`): epoch, version and signature in clear, the document gzipped.
 */
export function redisDocumentStore(url: string, prefix: string): DocumentStore & { close(): void } {
  const redis = openRedis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const key = `${prefix}declarative:document`;
  return {
    async save(document: StoredDocument) {
      const payload = gzipSync(Buffer.from(document.text, 'utf8')).toString('base64');
      await redis.set(key, JSON.stringify({ epoch: document.epoch, version: document.version, signature: document.signature, payload }));
    },
    async load() {
      const raw = await redis.get(key);
      if (raw === null) return null;
      try {
        const held = JSON.parse(raw) as { epoch: string; version: number; signature: string; payload: string };
        return { epoch: String(held.epoch), version: Number(held.version), signature: String(held.signature), text: gunzipSync(Buffer.from(held.payload, 'base64')).toString('utf8') };
      } catch {
        // not what this store writes: as good as none (a signature check would refuse it anyway)
        return null;
      }
    },
    close: () => redis.disconnect(),
  };
}
