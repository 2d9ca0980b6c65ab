import { readFileSync } from 'node:fs';
import { isKongSettingName } from './names';

/** Kong settings by name (lower case, as in kong.conf), with where each value came from. */
export type KongValues = Map<string, { value: string; from: string }>;

/**
 * A kong.conf file's text: `name = value` lines, `#` starting a comment (`\#` is a literal `#`), blank lines
 * skipped. A line that is not `name = value` is an error naming its line number.
 */
export function parseKongConf(text: string, file: string): KongValues {
  const values: KongValues = new Map();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = stripComment(raw).trim();
    if (line === '') return;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new Error(`${file}:${i + 1}: expected 'name = value', got '${raw.trim()}'`);
    values.set(m[1]!.toLowerCase(), { value: m[2]!.trim().replace(/\\#/g, '#'), from: `${file}:${i + 1}` });
  });
  return values;
}

function stripComment(line: string): string {
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '#' && line[i - 1] !== '\\') return line.slice(0, i);
  }
  return line;
}

export function readKongConf(path: string): KongValues {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read configuration file ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseKongConf(text, path);
}

/**
 * `KONG_<NAME>` variables (any case after the prefix), and `KONG_<NAME>_FILE` naming a file that holds the value (the
 * Docker image's convention for secrets such as KONG_PG_PASSWORD_FILE; its trailing line break dropped).
 */
export function kongEnvironment(env: NodeJS.ProcessEnv): KongValues {
  const values: KongValues = new Map();
  const files: Array<[string, string, string]> = [];
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith('KONG_') || value === undefined) continue;
    const name = key.slice(5).toLowerCase();
    if (name.endsWith('_file') && !isKongSettingName(name)) files.push([name.slice(0, -5), value, key]);
    else values.set(name, { value: value.trim(), from: key });
  }
  for (const [name, path, key] of files) {
    if (values.has(name)) continue;
    try {
      values.set(name, { value: readFileSync(path, 'utf8').replace(/\r?\n$/, ''), from: key });
    } catch (err) {
      throw new Error(`${key}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return values;
}
