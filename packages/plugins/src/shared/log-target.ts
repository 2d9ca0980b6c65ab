import { isIP } from 'node:net';
import { z } from 'zod';

const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Kong's `typedefs.host`: a host name or an IP address (IPv6 with or without brackets). */
export function hostField() {
  return z.string().refine((v) => HOSTNAME.test(v) || isIP(v.replace(/^\[(.*)\]$/, '$1')) !== 0, { error: (issue) => `invalid value: ${String(issue.input)}` });
}

/** Kong's `typedefs.port`. */
export function portField() {
  return z.number().int().min(0).max(65535);
}

/** Syslog severities, most severe last in this list's numbering: Kong's `one_of` order and RFC 5424's codes. */
export const SEVERITIES = ['debug', 'info', 'notice', 'warning', 'err', 'crit', 'alert', 'emerg'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SEVERITY_CODE: Record<Severity, number> = { emerg: 0, alert: 1, crit: 2, err: 3, warning: 4, notice: 5, info: 6, debug: 7 };

export function severityField() {
  return z.enum(SEVERITIES).default('info');
}

/** The severity config fields syslog and loggly share. */
export const severityFields = {
  log_level: severityField(),
  successful_severity: severityField(),
  client_errors_severity: severityField(),
  server_errors_severity: severityField(),
};

export interface SeverityConfig {
  log_level: Severity;
  successful_severity: Severity;
  client_errors_severity: Severity;
  server_errors_severity: Severity;
}

/**
 * The severity an exchange is logged at (by its status: 5xx, 4xx, else successful), or null when it is less severe
 * than `log_level` and so not sent, as Kong's syslog and loggly decide.
 */
export function severityOf(config: SeverityConfig, status: number): Severity | null {
  const severity = status >= 500 ? config.server_errors_severity : status >= 400 ? config.client_errors_severity : config.successful_severity;
  return SEVERITY_CODE[severity] <= SEVERITY_CODE[config.log_level] ? severity : null;
}
