import type { Snapshot, SnapshotDelta } from '@gatehouse/core';
import { applyDelta } from '../compile/apply-delta';
import { compile } from '../compile/compile';
import type { CompiledConfig } from '../compile/types';

/**
 * The control plane's check of what it publishes, with the data plane's own compile and applyDelta (what
 * DataPlaneNode runs): a snapshot or a delta that would not load on a data plane is never published; each call throws
 * to refuse.
 *
 * A delta can only be checked against the compiled config it follows (its plugin configs against the plugin lookup,
 * its routes against the services, its hash against the rows), so the last checked config is kept: nothing serves
 * from it, and it is replaced by each full check. Without it every write would cost a full compile of the config.
 */
export class PublicationCheck {
  private compiled: CompiledConfig | null = null;

  /** a full snapshot: compiled, and kept as what the next delta must follow (a refused one keeps the last good one) */
  load(snapshot: Snapshot): void {
    this.compiled = compile(snapshot);
  }

  /** a delta after the last checked config: applied to it (which then is the config after the delta) */
  applyDelta(delta: SnapshotDelta): void {
    if (!this.compiled) throw new Error('no configuration loaded to apply a delta to');
    this.compiled = applyDelta(this.compiled, delta);
  }

  /** a snapshot checked alone (publishers without deltas): nothing is kept */
  check(snapshot: Snapshot): void {
    compile(snapshot);
  }
}
