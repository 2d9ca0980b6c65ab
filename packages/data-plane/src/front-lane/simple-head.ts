/** The parsed head of one request, as the parser gave it. */
export interface Head {
  major: number;
  minor: number;
  raw: string[];
  method: string;
  url: string;
  upgrade: boolean;
  keepAlive: boolean;
  complete: boolean;
}

/** Whether the lane serves a request itself: HTTP/1.x without a body, an upgrade, an expectation or a missing Host. */
export function isSimple(head: Head): boolean {
  if (head.upgrade || head.major !== 1 || head.minor > 1 || head.method === 'CONNECT') return false;
  const raw = head.raw;
  let host = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const length = name.length;
    if (length === 4) {
      if (name.toLowerCase() === 'host') host = true;
    } else if (length === 14 && name.toLowerCase() === 'content-length') {
      if (raw[i + 1]!.trim() !== '0') return false;
    } else if ((length === 17 && name.toLowerCase() === 'transfer-encoding') || (length === 6 && name.toLowerCase() === 'expect')) return false;
  }
  // node:http refuses an HTTP/1.1 request without Host (400): it answers those itself
  return host || head.minor === 0;
}
