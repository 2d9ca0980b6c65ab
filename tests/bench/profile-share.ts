// What share of a process's CPU a part of its code takes, read from a V8 CPU profile (.cpuprofile) of that process:
// a ratio of samples taken in the same span of time, so it does not move when the machine's speed does (unlike a
// comparison of two processes measured one after the other).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  /** milliseconds of samples in which the thread was not idle */
  busyMs: number;
  /** the share (0–1) of busy samples whose stack holds a frame `part` picks */
  part: number;
  /** the share (0–1) of busy samples in the garbage collector */
  gc: number;
}

/** A frame of the profile: the function's name and its script's URL. */
export type FramePick = (frame: { functionName: string; url: string }) => boolean;

export function profileShare(file: string, part: FramePick): ProfileShare {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const inPart = new Map<number, boolean>();
  const pickedOnStack = (id: number): boolean => {
    const known = inPart.get(id);
    if (known !== undefined) return known;
    const parent = parentOf.get(id);
    const picked = part(byId.get(id)!.callFrame) || (parent !== undefined && pickedOnStack(parent));
    inPart.set(id, picked);
    return picked;
  };
  let busy = 0;
  let picked = 0;
  let gc = 0;
  // timeDeltas[i] is the time from the sample before to sample i: the time of sample i is the next delta
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)') continue;
    busy += us;
    if (name === '(garbage collector)') gc += us;
    if (pickedOnStack(id)) picked += us;
  }
  return { busyMs: busy / 1000, part: busy === 0 ? 0 : picked / busy, gc: busy === 0 ? 0 : gc / busy };
}

export interface TopFrame {
  /** `function (file:line)` */
  frame: string;
  /** the share (0–1) of busy time spent in this frame itself */
  self: number;
}

/**
 * The frames with the most self time in a profile, idle time aside: where a process's CPU goes. `lastMs` keeps only
 * the samples of the profile's last milliseconds (the span under load, without the start of the process).
 */
export function topFrames(file: string, count = 15, lastMs = Infinity): TopFrame[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let busy = 0;
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0);
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (total - at > lastMs * 1000) continue;
    const { functionName, url, lineNumber } = byId.get(profile.samples[i]!)!.callFrame;
    if (functionName === '(idle)') continue;
    const us = profile.timeDeltas[i + 1] ?? 0;
    busy += us;
    const where = url ? ` (${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/packages\//, '').replace(/^node:/, 'node:')}:${(lineNumber ?? 0) + 1})` : '';
    const key = `${functionName || '(anonymous)'}${where}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + us);
  }
  return [...selfUs]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, self: busy === 0 ? 0 : us / busy }));
}
