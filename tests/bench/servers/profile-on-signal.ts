// A bench server's CPU profile of just the span the bench chooses: the first SIGUSR2 starts V8's sampling profiler
// (in this process, through the inspector), the second stops it, writes the profile to `file` and prints `PROFILED`.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** microseconds between samples: four times V8's default, for a few tens of thousands of samples in a bench round */
const SAMPLING_INTERVAL_US = 250;

export function profileOnSignal(file: string): void {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    const step = running
      ? session.post('Profiler.stop').then(({ profile }) => {
          writeFileSync(file, JSON.stringify(profile));
          process.stdout.write('PROFILED\n');
        })
      : session
          .post('Profiler.enable')
          .then(() => session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US }))
          .then(() => session.post('Profiler.start'))
          .then(() => process.stdout.write('PROFILING\n'));
    running = !running;
    step.catch((err: unknown) => process.stderr.write(`profiler: ${String(err)}\n`));
  });
}
