/**
 * Reads the server name from a TLS ClientHello without terminating TLS (what nginx's ssl_preread does for Kong's
 * `tls_passthrough` routes). `bytes` is what the client sent first.
 */

/** Whether `bytes` start like a TLS handshake record (content type 22, version 3.x). */
export function looksLikeTls(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0x16 && bytes[1] === 0x03;
}

/** The whole first record, when `bytes` hold it all; else the number of bytes still missing. */
export function recordLength(bytes: Buffer): number | null {
  if (bytes.length < 5) return null;
  return 5 + bytes.readUInt16BE(3);
}

/** The SNI host name of a ClientHello record ('' when it carries none or cannot be read). */
export function clientHelloServerName(bytes: Buffer): string {
  try {
    let at = 5; // record header
    if (bytes[at] !== 0x01) return ''; // handshake type: ClientHello
    at += 4; // type and length
    at += 2 + 32; // client version, random
    at += 1 + bytes[at]!; // session id
    at += 2 + bytes.readUInt16BE(at); // cipher suites
    at += 1 + bytes[at]!; // compression methods
    const end = at + 2 + bytes.readUInt16BE(at);
    at += 2;
    while (at + 4 <= end) {
      const type = bytes.readUInt16BE(at);
      const length = bytes.readUInt16BE(at + 2);
      at += 4;
      if (type === 0) {
        // server_name: list length, then entries of (type, length, name); type 0 is a host name
        let entry = at + 2;
        while (entry + 3 <= at + length) {
          const nameLength = bytes.readUInt16BE(entry + 1);
          if (bytes[entry] === 0) return bytes.subarray(entry + 3, entry + 3 + nameLength).toString('latin1').toLowerCase();
          entry += 3 + nameLength;
        }
        return '';
      }
      at += length;
    }
  } catch {
    return '';
  }
  return '';
}
