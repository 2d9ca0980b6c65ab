import { request } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { laxResolve, startFileUpstream } from './file-upstream';

function get(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('file upstream', () => {
  it('resolves targets as a lax file server does', () => {
    for (const target of [
      '/app/private/secret',
      '/app/public/../private/secret',
      '/app/public/%2e%2e/private/secret',
      '/app/public/..%2fprivate/secret',
      '/app/public/..%5cprivate/secret',
      '/app/public/..;/private/secret',
      '//app//private/secret?x=1',
      '/app/%70rivate/secret',
    ]) {
      expect(laxResolve(target)).toBe('/app/private/secret');
    }
    expect(laxResolve('/../../etc')).toBe('/etc');
  });

  it('serves its files by resolved path and records every request', async () => {
    const files = await startFileUpstream({ '/app/private/secret': 'top secret' });
    try {
      expect(await get(files.port, '/app/public/..%2fprivate/secret')).toEqual({ status: 200, text: 'top secret' });
      expect(await get(files.port, '/nothing')).toEqual({ status: 404, text: 'not found' });
      expect(files.received.map((r) => r.resolved)).toEqual(['/app/private/secret', '/nothing']);
    } finally {
      await files.close();
    }
  });
});
