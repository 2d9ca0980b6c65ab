import { spawn, type ChildProcess } from 'node:child_process';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnOptions {
  /** merged over this process's environment */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** the process is ready once its output (stdout and stderr) matches this */
  readyPattern?: RegExp | string;
  /** the process is ready once a GET to this URL answers 2xx */
  readyUrl?: string;
  /** how long to wait for readiness before killing the process and failing (ms, default 30000) */
  timeoutMs?: number;
  /** shown in error messages; defaults to the command */
  name?: string;
  /** copy the child's output to this process's stderr as it arrives (default: env GATEHOUSE_TEST_ECHO=1) */
  echo?: boolean;
}

export interface SpawnedProcess {
  readonly name: string;
  readonly pid: number;
  /** stdout and stderr interleaved in arrival order (the last 2 MB) */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** resolves when the process has exited */
  readonly exited: Promise<ProcessExit>;
  isRunning(): boolean;
  /** waits until the output from `fromOffset` on (an earlier `output().length`) matches `pattern` */
  waitForOutput(pattern: RegExp | string, timeoutMs?: number, fromOffset?: number): Promise<void>;
  /** sends a signal to the process (and the processes it started) */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5000); resolves once the process has exited */
  stop(graceMs?: number): Promise<ProcessExit>;
}

const OUTPUT_LIMIT = 2 * 1024 * 1024;
const live = new Set<ChildProcess>();
let exitHooksInstalled = false;

/**
 * Each child leads its own process group, so a signal reaches the processes it started too (a `tsx` wrapper and
 * its node child, for instance). Signals go to that group only, addressed by the child's PID.
 */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      process.kill(child.pid, signal);
    } catch {}
  }
}

function killLeftovers(): void {
  for (const child of live) signalGroup(child, 'SIGKILL');
  live.clear();
}

/** Children must not outlive the test process, whether it ends normally or by a signal. */
function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killLeftovers);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    if (process.listenerCount(signal) > 0) continue; // someone else decides how this process ends
    const onSignal = () => {
      killLeftovers();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function patternMatches(pattern: RegExp | string, text: string): boolean {
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

function tail(text: string, chars = 4000): string {
  return text.length > chars ? `…${text.slice(-chars)}` : text;
}

async function urlAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts a process with its output captured; resolves once it is ready (per `readyPattern` / `readyUrl`, or at
 * once when neither is given). Fails, after killing the process, when it exits or times out before that.
 */
export async function spawnProcess(command: string, args: string[], options: SpawnOptions = {}): Promise<SpawnedProcess> {
  installExitHooks();
  const name = options.name ?? [command, ...args].join(' ');
  const timeoutMs = options.timeoutMs ?? 30000;
  const echo = options.echo ?? process.env.GATEHOUSE_TEST_ECHO === '1';
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);

  let combined = '';
  let out = '';
  let err = '';
  let dropped = 0; // characters cut from the front of `combined`, so offsets stay meaningful
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer, stream: 'out' | 'err') => {
    const text = chunk.toString('utf8');
    if (echo) process.stderr.write(`[${name}] ${text}`);
    combined += text;
    if (stream === 'out') out = (out + text).slice(-OUTPUT_LIMIT);
    else err = (err + text).slice(-OUTPUT_LIMIT);
    if (combined.length > OUTPUT_LIMIT) {
      dropped += combined.length - OUTPUT_LIMIT;
      combined = combined.slice(-OUTPUT_LIMIT);
    }
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', (c: Buffer) => append(c, 'out'));
  child.stderr!.on('data', (c: Buffer) => append(c, 'err'));

  let exitInfo: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      live.delete(child);
      for (const listener of listeners) listener();
      resolve(exitInfo);
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const waitForOutput = (pattern: RegExp | string, waitMs = timeoutMs, fromOffset = 0): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const text = combined.slice(Math.max(0, fromOffset - dropped));
        if (patternMatches(pattern, text)) return done(null);
        if (exitInfo) return done(new Error(`${name} exited (${JSON.stringify(exitInfo)}) before printing ${pattern}:\n${tail(combined)}`));
      };
      const timer = setTimeout(() => done(new Error(`${name} did not print ${pattern} within ${waitMs} ms:\n${tail(combined)}`)), waitMs);
      const done = (error: Error | null) => {
        clearTimeout(timer);
        listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      listeners.add(check);
      check();
    });

  const stop = async (graceMs = 5000): Promise<ProcessExit> => {
    if (exitInfo) return exitInfo;
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };

  const handle: SpawnedProcess = {
    name,
    get pid() {
      return child.pid ?? -1;
    },
    output: () => combined,
    stdout: () => out,
    stderr: () => err,
    exited,
    isRunning: () => exitInfo === null && child.pid !== undefined,
    waitForOutput,
    signal: (signal) => signalGroup(child, signal),
    stop,
  };

  const failed = await Promise.race([spawnError, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
  if (failed) {
    live.delete(child);
    throw new Error(`could not start ${name}: ${failed.message}`);
  }

  try {
    if (options.readyPattern !== undefined) await waitForOutput(options.readyPattern, timeoutMs);
    if (options.readyUrl !== undefined) {
      const deadline = Date.now() + timeoutMs;
      while (!(await urlAnswers(options.readyUrl))) {
        if (exitInfo) throw new Error(`${name} exited (${JSON.stringify(exitInfo)}) before ${options.readyUrl} answered:\n${tail(combined)}`);
        if (Date.now() > deadline) throw new Error(`${options.readyUrl} did not answer 2xx within ${timeoutMs} ms (${name}):\n${tail(combined)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (error) {
    await stop(1000);
    throw error;
  }
  return handle;
}

/** Stops every process started through `spawnProcess` that is still running. */
export async function stopAllProcesses(graceMs = 5000): Promise<void> {
  const children = [...live];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          signalGroup(child, 'SIGTERM');
          setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs).unref();
        }),
    ),
  );
}

/** Whether a process with this PID exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
