import { createSocket, type Socket } from 'node:dgram';

/** A record the test DNS server answers with. */
export interface DnsAnswer {
  /** an A or AAAA record's address (unused for an SRV record) */
  address: string;
  /** seconds */
  ttl?: number;
  /** an SRV record instead of an address */
  srv?: { priority: number; weight: number; port: number; target: string };
}

/**
 * A small authoritative DNS server over UDP for tests: answers A, AAAA and SRV questions from a table the test changes
 * while it runs; any other name gets NXDOMAIN. Point a data plane at it (GATEHOUSE_DNS_RESOLVER) instead of
 * editing /etc/hosts.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>` */
  readonly address: string;
  readonly port: number;
  /** questions received, per lower-case name */
  readonly queries: Map<string, number>;
  set(name: string, answers: DnsAnswer[]): void;
  delete(name: string): void;
  close(): Promise<void>;
}

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = offset;
  while (i < msg.length) {
    const len = msg[i]!;
    if (len === 0) return { name: labels.join('.'), end: i + 1 };
    labels.push(msg.toString('latin1', i + 1, i + 1 + len));
    i += 1 + len;
  }
  throw new Error('truncated question');
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return out;
}

function srvBytes(srv: NonNullable<DnsAnswer['srv']>): Buffer {
  const head = Buffer.alloc(6);
  head.writeUInt16BE(srv.priority, 0);
  head.writeUInt16BE(srv.weight, 2);
  head.writeUInt16BE(srv.port, 4);
  const labels = srv.target.split('.').filter(Boolean).map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  return Buffer.concat([head, ...labels, Buffer.from([0])]);
}

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const table = new Map<string, DnsAnswer[]>();
  const queries = new Map<string, number>();
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    try {
      const id = msg.readUInt16BE(0);
      const { name, end } = readName(msg, 12);
      const qtype = msg.readUInt16BE(end);
      const question = msg.subarray(12, end + 4);
      const key = name.toLowerCase();
      queries.set(key, (queries.get(key) ?? 0) + 1);
      const known = table.get(key);
      const wanted = (known ?? []).filter((a) => (a.srv ? qtype === 33 : qtype === 28 ? a.address.includes(':') : qtype === 1 ? !a.address.includes(':') : false));
      const answers = wanted.map((a) => {
        const rdata = a.srv ? srvBytes(a.srv) : qtype === 28 ? ipv6Bytes(a.address) : Buffer.from(a.address.split('.').map(Number));
        const rr = Buffer.alloc(12);
        rr.writeUInt16BE(0xc00c, 0); // name: pointer to the question
        rr.writeUInt16BE(qtype, 2);
        rr.writeUInt16BE(1, 4);
        rr.writeUInt32BE(a.ttl ?? 30, 6);
        rr.writeUInt16BE(rdata.length, 10);
        return Buffer.concat([rr, rdata]);
      });
      const header = Buffer.alloc(12);
      header.writeUInt16BE(id, 0);
      // response, authoritative, recursion available; NXDOMAIN for unknown names
      header.writeUInt16BE(0x8400 | 0x0080 | (known ? 0 : 3), 2);
      header.writeUInt16BE(1, 4);
      header.writeUInt16BE(answers.length, 6);
      socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
    } catch {}
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set: (name, answers) => void table.set(name.toLowerCase(), answers),
    delete: (name) => void table.delete(name.toLowerCase()),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
