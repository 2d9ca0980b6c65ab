import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { trustedCaBundle } from '@gatehouse/plugins';
import { adoptUpstreamCaBundle } from './data-plane-options';
import { readSettings } from './settings';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe("GATEHOUSE_UPSTREAM_CA_BUNDLE (Kong's lua_ssl_trusted_certificate)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ca-bundle-'));
  const file = join(dir, 'ca.pem');
  writeFileSync(file, PEM);
  afterEach(() => adoptUpstreamCaBundle(readSettings({}, 'data_plane')));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads `system` (the default) as the system store: no CAs of its own', () => {
    for (const value of [undefined, 'system', ' system , system ']) {
      const settings = readSettings(value === undefined ? {} : { GATEHOUSE_UPSTREAM_CA_BUNDLE: value }, 'data_plane');
      expect(settings.upstreamCaBundle).toEqual([]);
      adoptUpstreamCaBundle(settings);
      expect(trustedCaBundle()).toBeNull();
    }
  });

  it("trusts the files' CAs alone, and the system's store too when `system` is beside them", () => {
    adoptUpstreamCaBundle(readSettings({ GATEHOUSE_UPSTREAM_CA_BUNDLE: file }, 'data_plane'));
    expect(trustedCaBundle()).toEqual([PEM]);
    const both = readSettings({ GATEHOUSE_UPSTREAM_CA_BUNDLE: `system,${file}` }, 'data_plane');
    expect(both.upstreamCaBundle).toEqual(['system', file]);
    adoptUpstreamCaBundle(both);
    expect(trustedCaBundle()).toEqual([...rootCertificates, PEM]);
  });

  it('refuses a file it cannot read, naming the setting and the file', () => {
    expect(() => adoptUpstreamCaBundle(readSettings({ GATEHOUSE_UPSTREAM_CA_BUNDLE: join(dir, 'missing.pem') }, 'data_plane'))).toThrow(`GATEHOUSE_UPSTREAM_CA_BUNDLE: cannot read ${join(dir, 'missing.pem')}`);
  });
});
