import type { ConfigFeed, ConfigSink } from '../node/config-feed';
import type { ConfigMessage } from './messages';
import type { PrimaryLink } from './proxy-worker';

export interface PrimaryFeedLogger {
  error(message: string, detail?: Record<string, unknown>): void;
  debug(message: string, detail?: Record<string, unknown>): void;
}

/** Hands a config message to the node: a snapshot is compiled, a delta applied, a relabel moves the version (throws to refuse). */
export function deliverConfigMessage(sink: ConfigSink, message: ConfigMessage): void {
  switch (message.kind) {
    case 'snapshot':
      return sink.load(message.snapshot);
    case 'delta':
      return sink.applyDelta(message.delta);
    case 'relabel':
      return sink.relabel(message.version);
  }
}

/**
 * A proxy worker's feed: the configs its primary verified and applied first, over IPC. The start message's config is
 * served before the worker opens its ports; a delta that does not follow this worker's config (it started between
 * two) asks the primary for the full one.
 */
export class PrimaryFeed implements ConfigFeed {
  constructor(
    private readonly link: PrimaryLink,
    private readonly log: PrimaryFeedLogger,
  ) {}

  async open(sink: ConfigSink): Promise<void> {
    const start = await this.link.waitForStart();
    if (start.config) this.deliver(sink, start.config);
    this.link.onConfig((message) => this.deliver(sink, message));
  }

  /** the primary sends every change as it comes: nothing to subscribe to */
  follow(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private deliver(sink: ConfigSink, message: ConfigMessage): void {
    try {
      deliverConfigMessage(sink, message);
      this.log.debug('proxy worker applied the configuration', { pid: process.pid, version: sink.serving()?.version, kind: message.kind });
    } catch (err) {
      // a delta that does not follow this worker's config (it started between two): the full one replaces it
      if (message.kind === 'delta') return this.link.resync();
      // the primary compiled the same config before forwarding it: this is a fault, and the old config keeps serving
      this.log.error('proxy worker cannot apply the configuration', { error: err instanceof Error ? err.message : String(err) });
    }
  }
}
