import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import { freePort, freePorts } from './ports';
import { isAlive, spawnProcess, stopAllProcesses } from './processes';

const node = process.execPath;

describe('spawnProcess', () => {
  it('waits for the ready pattern, captures output, and stops by PID', async () => {
    const child = await spawnProcess(node, ['-e', 'console.log("booting"); console.error("warming"); setTimeout(() => console.log("ready now"), 100); setInterval(() => {}, 1000)'], {
      readyPattern: /ready now/,
      timeoutMs: 5000,
    });
    expect(child.isRunning()).toBe(true);
    expect(child.stdout()).toContain('booting');
    expect(child.stderr()).toContain('warming');
    expect(child.output()).toMatch(/booting[\s\S]*ready now/);
    const exit = await child.stop();
    expect(exit.signal).toBe('SIGTERM');
    expect(isAlive(child.pid)).toBe(false);
  });

  it('fails with the output when the process exits before it is ready', async () => {
    await expect(spawnProcess(node, ['-e', 'console.error("bad config"); process.exit(3)'], { readyPattern: 'listening', timeoutMs: 5000 })).rejects.toThrow(
      /exited \(\{"code":3[\s\S]*bad config/,
    );
  });

  it('kills the process and fails when it is not ready in time', async () => {
    const started = spawnProcess(node, ['-e', 'console.log(process.pid); setInterval(() => {}, 1000)'], { readyPattern: 'never', timeoutMs: 500 });
    await expect(started).rejects.toThrow(/did not print never within 500 ms/);
    // the child printed its PID before the timeout, and the error carries the output
    const message = await started.then(() => '', (e: Error) => e.message);
    const pid = Number(message.match(/\n(\d+)/)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const child = await spawnProcess(node, ['-e', 'process.on("SIGTERM", () => {}); console.log("up"); setInterval(() => {}, 1000)'], { readyPattern: 'up' });
    const exit = await child.stop(300);
    expect(exit.signal).toBe('SIGKILL');
  });

  it('waits for a ready URL to answer 2xx', async () => {
    const port = await freePort();
    const script = `setTimeout(() => require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1'), 300)`;
    const child = await spawnProcess(node, ['-e', script], { readyUrl: `http://127.0.0.1:${port}/`, timeoutMs: 5000 });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(await res.text()).toBe('ok');
    await child.stop();
  });

  it('waits for output that appears after a given offset', async () => {
    const child = await spawnProcess(node, ['-e', 'console.log("tick"); setTimeout(() => console.log("tick"), 300); setInterval(() => {}, 1000)'], { readyPattern: 'tick' });
    const offset = child.output().length;
    const before = Date.now();
    await child.waitForOutput('tick', 3000, offset);
    expect(Date.now() - before).toBeGreaterThan(100);
    await child.stop();
  });

  it('stopAllProcesses stops whatever is still running', async () => {
    const a = await spawnProcess(node, ['-e', 'console.log("a"); setInterval(() => {}, 1000)'], { readyPattern: 'a' });
    const b = await spawnProcess(node, ['-e', 'console.log("b"); setInterval(() => {}, 1000)'], { readyPattern: 'b' });
    await stopAllProcesses();
    expect(a.isRunning()).toBe(false);
    expect(b.isRunning()).toBe(false);
  });

  it('fails clearly when the command does not exist', async () => {
    await expect(spawnProcess('/nonexistent/gatehouse-binary', [])).rejects.toThrow(/could not start/);
  });
});

describe('freePort', () => {
  it('returns ports that can be bound', async () => {
    const ports = await freePorts(3);
    expect(new Set(ports).size).toBe(3);
    const port = await freePort();
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  });

  it('never hands out a recent port again, and keeps below the ephemeral range', async () => {
    // none of these is listened on: without the memory of recent ports, 200 picks among a worker's 3,192 would repeat
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(200);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20000);
      expect(port).toBeLessThan(32768);
    }
  });
});
