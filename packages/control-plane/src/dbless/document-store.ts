import { createHmac, timingSafeEqual } from 'node:crypto';

/** The last document a database-less control plane applied, with the config position it was published at. */
export interface StoredDocument {
  epoch: string;
  version: number;
  /** the document as canonical JSON */
  text: string;
  /** hex HMAC-SHA256 of epoch, version and text under the cluster secret */
  signature: string;
}

/** Where the last applied document is kept (Redis, beside the signed snapshot), so a restarted control plane resumes. */
export interface DocumentStore {
  save(document: StoredDocument): Promise<void>;
  load(): Promise<StoredDocument | null>;
}

function mac(secret: string, epoch: string, version: number, text: string): Buffer {
  return createHmac('sha256', secret).update(`gatehouse declarative document\n${epoch}\n${version}\n`).update(text).digest();
}

export function signDocument(secret: string, epoch: string, version: number, text: string): StoredDocument {
  return { epoch, version, text, signature: mac(secret, epoch, version, text).toString('hex') };
}

/** whether the stored document was signed with this secret (a forged or foreign one is never loaded) */
export function verifyDocument(secret: string, stored: StoredDocument): boolean {
  if (typeof stored.signature !== 'string' || !/^[0-9a-f]{64}$/.test(stored.signature)) return false;
  return timingSafeEqual(mac(secret, stored.epoch, stored.version, stored.text), Buffer.from(stored.signature, 'hex'));
}

/** A store in memory (tests, and one process where nothing outlives it). */
export class MemoryDocumentStore implements DocumentStore {
  private held: StoredDocument | null = null;

  async save(document: StoredDocument): Promise<void> {
    this.held = document;
  }

  async load(): Promise<StoredDocument | null> {
    return this.held;
  }
}
