import { RE2JS } from 're2js';

/**
 * Route regexes (kong-reference decision 17) run on a linear-time engine with RE2 semantics (re2js, pure JS): no
 * pattern can make one request hold the event loop. Patterns RE2 cannot run in linear time (backreferences,
 * lookahead, lookbehind) do not compile: the admin API refuses them and the data plane never sees them.
 */
export interface LinearRegex {
  readonly source: string;
  /** the text matched (from the start of `input` when anchored), or null */
  exec(input: string): string | null;
  test(input: string): boolean;
  /** the groups of the first match, numbered (every group, named ones too) and by name; null when nothing matches */
  captures(input: string): RegexCaptures | null;
}

/** Kong's `uri_captures`: groups in order (null for a group that did not take part) and the named ones by name. */
export interface RegexCaptures {
  /** the whole match (Kong's `uri_captures[0]`) */
  whole?: string;
  /** where the whole match starts in the input (0-based) */
  start?: number;
  unnamed: Array<string | null>;
  named: Record<string, string>;
}

export interface LinearRegexOptions {
  /** match at the start of the input only (route paths); otherwise anywhere (header values) */
  anchored?: boolean;
  caseInsensitive?: boolean;
}

/** Compiles a pattern for the linear-time engine; throws with RE2's reason when it cannot. */
export function compileLinearRegex(source: string, options: LinearRegexOptions = {}): LinearRegex {
  const pattern = RE2JS.compile(options.anchored ? `^(?:${source})` : source, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    source,
    exec(input) {
      const matcher = pattern.matcher(input);
      return matcher.find() ? matcher.group(0) : null;
    },
    test(input) {
      return pattern.test(input);
    },
    captures(input) {
      const matcher = pattern.matcher(input);
      if (!matcher.find()) return null;
      const unnamed: Array<string | null> = [];
      for (let i = 1; i <= matcher.groupCount(); i++) unnamed.push(matcher.group(i));
      const named: Record<string, string> = {};
      for (const [name, index] of Object.entries(pattern.namedGroups() as Record<string, number>)) {
        const value = matcher.group(index);
        if (value !== null) named[name] = value;
      }
      return { whole: matcher.group(0) ?? '', start: matcher.start(0), unnamed, named };
    },
  };
}

/** Why a route regex is refused (a backreference, lookaround, a syntax error), or null when it compiles. */
export function linearRegexError(source: string): string | null {
  try {
    RE2JS.compile(source);
    return null;
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    return `invalid regex: '${source}' (${reason}; route regexes run in linear time: no backreferences or lookaround)`;
  }
}
