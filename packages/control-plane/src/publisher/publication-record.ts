import { compareEpochs, type Snapshot } from '@gatehouse/core';

export interface PublisherLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Something that happened to publication and that an operator should hear about (kept on `GET /status`). */
export interface PublicationEvent {
  kind: 'forged_head' | 'foreign_epoch' | 'database_restored' | 'epoch_changed' | 'stale_head' | 'database_unreachable' | 'database_reachable';
  message: string;
  /** epoch seconds */
  at: number;
  /** the head found in the bus, when the event is about one */
  head?: { version: number; epoch: string | null };
}

export interface PublisherStatus {
  version: number | null;
  hash: string | null;
  /** the cluster epoch of the last published snapshot */
  epoch: string | null;
  published_at: number | null;
  last_error: string | null;
  /** whether the last read of the database for publication succeeded (null before the first one) */
  database_reachable: boolean | null;
  /** the most recent events, oldest first (at most 20) */
  events: PublicationEvent[];
}

/** a head as the bus announces it */
export interface HeadPosition {
  version: number;
  hash: string;
  epoch?: string | null;
}

const MAX_EVENTS = 20;

/**
 * What a publisher has published and what happened to publication: the last version out, the last error, whether the
 * database answers, and the events an operator should hear about, each logged as it is recorded.
 */
export class PublicationRecord {
  private last: PublisherStatus = {
    version: null,
    hash: null,
    epoch: null,
    published_at: null,
    last_error: null,
    database_reachable: null,
    events: [],
  };

  constructor(private readonly log: PublisherLogger) {}

  status(): PublisherStatus {
    return { ...this.last, events: this.last.events.map((e) => ({ ...e })) };
  }

  published(what: Pick<Snapshot, 'version' | 'hash' | 'epoch'>): void {
    this.last = { ...this.last, version: what.version, hash: what.hash, epoch: what.epoch ?? null, published_at: Math.floor(Date.now() / 1000), last_error: null };
  }

  /** a failed publication: kept as the last error and logged */
  failed(message: string, reason: string): void {
    this.last = { ...this.last, last_error: `${message}: ${reason}` };
    this.log.error(message, { error: reason });
  }

  /** whether `head` is exactly what was last published */
  isLastPublished(head: HeadPosition): boolean {
    const last = this.last;
    return head.version === last.version && head.hash === last.hash && (head.epoch ?? null) === last.epoch;
  }

  /** whether `head` is what was last published, and that is the database's version and epoch */
  inSync(head: HeadPosition | null, version: number, epoch: string | null): boolean {
    return head !== null && this.last.hash !== null && this.isLastPublished(head) && this.last.version === version && this.last.epoch === epoch;
  }

  event(kind: PublicationEvent['kind'], message: string, head?: { version: number; epoch: string | null }): void {
    const entry: PublicationEvent = { kind, message, at: Math.floor(Date.now() / 1000) };
    if (head) entry.head = head;
    this.last = { ...this.last, events: [...this.last.events, entry].slice(-MAX_EVENTS) };
    const fields = head ? { head_version: head.version, head_epoch: head.epoch } : {};
    if (kind === 'database_reachable') this.log.info(message, fields);
    else this.log.warn(message, fields);
  }

  databaseReachable(reachable: boolean, err?: unknown): void {
    const before = this.last.database_reachable;
    this.last = { ...this.last, database_reachable: reachable };
    if (before === reachable) return;
    if (!reachable) {
      const reason = err instanceof Error ? err.message : String(err);
      this.event('database_unreachable', `the database is unreachable (${reason}); publication resumes when it is back`);
    } else if (before === false) {
      this.event('database_reachable', 'the database is reachable again; publishing the latest committed state');
    }
  }

  /** A genuine head that the snapshot about to be published goes past: said when it is not ordinary progress. */
  noteReplacedHead(head: { version: number; hash: string; epoch: string | null }, snapshot: Snapshot): void {
    const ours = snapshot.epoch ?? null;
    const reported = this.last.events.at(-1)?.head;
    if (reported && reported.version === head.version && reported.epoch === head.epoch) return; // just said why
    if (head.epoch !== ours && compareEpochs(ours, head.epoch) > 0) {
      this.event(
        'epoch_changed',
        `the bus held version ${head.version} of an earlier epoch ${head.epoch ?? '(none)'}: this database is new (reset, or restored) ` +
          `and publishes epoch ${ours} from version ${snapshot.version}; data planes follow it`,
        { version: head.version, epoch: head.epoch },
      );
    } else if (head.epoch === ours && this.last.epoch === ours && this.last.version !== null && head.version < this.last.version) {
      this.event(
        'stale_head',
        `the bus held version ${head.version}, older than version ${this.last.version} published before (a replayed snapshot, or a ` +
          `restored Redis); republished version ${snapshot.version}, data planes kept the newer config`,
        { version: head.version, epoch: head.epoch },
      );
    }
  }
}
