import { constants, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';

/**
 * Decision 31 on the HTTP/2 side of the TLS listener, per connection (session):
 *   - rapid reset (CVE-2023-44487): every stream the client resets before its response is complete counts one up,
 *     every stream answered to its end one down (never below zero); past `resetAllowance` the connection is sent
 *     GOAWAY ENHANCE_YOUR_CALM and closed. A client cancelling now and then never gets near it; one that opens
 *     streams only to reset them gets there within a few round trips, whatever the stream limit;
 *   - headers in time: a connection that has sent no complete request `clientHeaderTimeout` after it opened (headers
 *     dripping in, or nothing at all) is sent GOAWAY and closed, as is one whose streams have all ended for
 *     `keepAliveTimeout`, and one whose next header block is still incomplete `clientHeaderTimeout` after it began
 *     while other streams are open (no other frame can come in meanwhile: a header block is never interleaved). Bytes
 *     that arrive do not push these deadlines back (Node's own session timeout does), so a client cannot hold a
 *     connection by trickling headers or PING frames.
 * One sweep for all connections checks the deadlines; nothing is armed per stream.
 */
export interface Http2Limits {
  /** ms a new connection has to complete its first request's headers (Kong's client_header_timeout) */
  clientHeaderTimeout: number;
  /** ms a connection with no open stream is kept (Kong's keepalive_timeout) */
  keepAliveTimeout: number;
  /** streams reset beyond those completed before the connection is closed */
  resetAllowance: number;
}

interface SessionState {
  readonly session: ServerHttp2Session;
  open: number;
  /** resets not yet balanced by completed streams */
  excessResets: number;
  /** when the last stream ended (or the connection opened) */
  idleSince: number;
  /** a complete request came in */
  served: boolean;
  /** sent GOAWAY for resetting too much; cut once the client had time to read it */
  rejected: boolean;
  /** the highest stream id whose headers were complete (handed over as a stream) */
  highestStream: number;
  /** a later stream whose HEADERS nghttp2 began reading, and when the sweep first saw it so */
  partial: { id: number; since: number } | null;
}

/**
 * How long a connection sent GOAWAY for its resets is kept before it is cut: time for the client to read the GOAWAY
 * (cut at once, a client still writing would get a TCP reset in its place). Streams it opens meanwhile are ignored by
 * nghttp2 (their ids are past the GOAWAY's last stream).
 */
const REJECT_GRACE_MS = 1_000;

const STATE = Symbol('gatehouse.http2State');

interface GuardedStream extends ServerHttp2Stream {
  [STATE]?: SessionState;
  [GUARD]?: Http2Guard;
}
const GUARD = Symbol('gatehouse.http2Guard');

/** 'close' of a guarded stream (`this`): one function for all streams */
function streamClosed(this: GuardedStream): void {
  this[GUARD]!.ended(this[STATE]!, this.aborted);
}

export class Http2Guard {
  private readonly sessions = new Set<SessionState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: Http2Limits) {
    const every = Math.max(10, Math.min(1_000, Math.floor(Math.min(limits.clientHeaderTimeout, limits.keepAliveTimeout) / 4)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  adopt(session: ServerHttp2Session): void {
    const state: SessionState = { session, open: 0, excessResets: 0, idleSince: Date.now(), served: false, rejected: false, highestStream: 0, partial: null };
    this.sessions.add(state);
    session.once('close', () => this.sessions.delete(state));
    session.on('stream', (stream: GuardedStream) => {
      state.served = true;
      if (stream.id !== undefined && stream.id > state.highestStream) state.highestStream = stream.id;
      // gone before it was handed over (the session was torn down meanwhile): counted as a reset
      if (stream.destroyed) return this.ended(state, true, false);
      state.open++;
      stream[STATE] = state;
      stream[GUARD] = this;
      stream.once('close', streamClosed);
    });
  }

  /** a stream ended: `reset` when before its response was complete */
  ended(state: SessionState, reset: boolean, counted = true): void {
    if (counted && --state.open === 0) state.idleSince = Date.now();
    if (!reset) {
      if (state.excessResets > 0) state.excessResets--;
      return;
    }
    if (++state.excessResets <= this.limits.resetAllowance || state.rejected || state.session.destroyed) return;
    state.rejected = true;
    this.sessions.delete(state);
    const session = state.session;
    session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    setTimeout(() => session.destroy(new Error('HTTP/2 streams reset faster than they complete'), constants.NGHTTP2_ENHANCE_YOUR_CALM), REJECT_GRACE_MS).unref();
  }

  private sweep(): void {
    const now = Date.now();
    for (const state of this.sessions) {
      if (state.session.closed) continue;
      if (state.open > 0) {
        if (this.headersTooSlow(state, now)) this.cut(state);
        continue;
      }
      const limit = state.served ? this.limits.keepAliveTimeout : this.limits.clientHeaderTimeout;
      if (now - state.idleSince < limit) continue;
      // no stream of it is open
      this.cut(state);
    }
  }

  /**
   * Whether a header block has been coming in for `clientHeaderTimeout` while other streams are open: nghttp2 counts
   * the stream whose HEADERS it began reading as the last one processed, and hands it over only once the block is
   * complete. Any other frame received in between (DATA of an open stream) clears the watch.
   */
  private headersTooSlow(state: SessionState, now: number): boolean {
    let last: number | undefined;
    try {
      last = state.session.state.lastProcStreamID;
    } catch {
      return false; // torn down meanwhile
    }
    if (last === undefined || last <= state.highestStream) {
      state.partial = null;
      return false;
    }
    if (state.partial?.id !== last) {
      state.partial = { id: last, since: now };
      return false;
    }
    return now - state.partial.since >= this.limits.clientHeaderTimeout;
  }

  /**
   * GOAWAY NO_ERROR and close, now: a graceful close would wait for headers still trickling in, which nghttp2 counts
   * as an open stream
   */
  private cut(state: SessionState): void {
    this.sessions.delete(state);
    state.session.destroy();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sessions.clear();
  }
}
