import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { severityFields } from '../shared/log-target';

export const FACILITY_CODE = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
} as const;

type Facility = keyof typeof FACILITY_CODE;

// Kong's order of the `one_of` list, which its validation message repeats
const FACILITIES: [Facility, ...Facility[]] = ['auth', 'authpriv', 'cron', 'daemon', 'ftp', 'kern', 'lpr', 'mail', 'news', 'syslog', 'user', 'uucp', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7'];

/** Kong 3.x `syslog` config. */
export const syslogConfigSchema = z
  .object({
    ...severityFields,
    custom_fields_by_lua: customFieldsByLua,
    facility: z.enum(FACILITIES).default('user'),
  })
  .strict();

export type SyslogConfig = z.infer<typeof syslogConfigSchema>;
