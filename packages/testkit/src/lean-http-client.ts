import net from 'node:net';

/*
 * A load generator's HTTP/1.1 client: keep-alive connections to one origin, one request in flight per connection
 * (no pipelining), each request written in one piece and each answer framed by its Content-Length. node:http's
 * ClientRequest and IncomingMessage cost a benchmark's load process about three times as much CPU per request, and
 * on a 2-core machine the load generator's CPU is taken from the service it measures; wrk and pgbench keep their
 * own clients lean for the same reason. The wire is ordinary HTTP/1.1: the service parses every request as any
 * client's. Answers without a Content-Length (chunked, streams) are refused, since none of the routes it drives sends one.
 */

export interface LeanAnswer {
  status: number;
  /** The body as text, when asked for, and always for a status other than 200. */
  body?: string;
}

interface Pending {
  head: string;
  body: string;
  wantBody: boolean;
  resolve: (answer: LeanAnswer) => void;
  reject: (error: Error) => void;
}

interface Connection {
  socket: net.Socket;
  busy: Pending | undefined;
  buffer: Buffer;
  /** The socket error's code, reported to a request the connection was lost under. */
  failure?: string;
}

const headerEnd = Buffer.from('\r\n\r\n');

/**
 * @example const client = new LeanHttpClient(new URL('http://127.0.0.1:9097'), { maxSockets: 256 });
 *          const { status } = await client.post('/v1/pay', JSON.stringify(body), { 'x-ledger-agent': token });
 */
export class LeanHttpClient {
  readonly #host: string;
  readonly #port: number;
  readonly #maxSockets: number;
  readonly #timeoutMs: number;
  readonly #idle: Connection[] = [];
  readonly #waiting: Pending[] = [];
  #open = 0;
  #closed = false;

  constructor(origin: URL, options: { maxSockets: number; timeoutMs?: number }) {
    this.#host = origin.hostname;
    this.#port = Number(origin.port || 80);
    this.#maxSockets = options.maxSockets;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** POSTs a JSON body; `headers` are added as given (lowercase names). */
  post(path: string, json: string, headers: Record<string, string> = {}, wantBody = false): Promise<LeanAnswer> {
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.#host}:${this.#port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return this.#send(`${head}\r\n`, json, wantBody);
  }

  /** Closes every connection; requests still waiting fail. */
  close(): void {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.socket.destroy();
    for (const pending of this.#waiting.splice(0)) pending.reject(new Error('client closed'));
  }

  #send(head: string, body: string, wantBody: boolean): Promise<LeanAnswer> {
    if (this.#closed) return Promise.reject(new Error('client closed'));
    return new Promise<LeanAnswer>((resolve, reject) => {
      const pending: Pending = { head, body, wantBody, resolve, reject };
      const idle = this.#idle.pop();
      if (idle) this.#start(idle, pending);
      else if (this.#open < this.#maxSockets) this.#start(this.#connect(), pending);
      else this.#waiting.push(pending);
    });
  }

  #connect(): Connection {
    this.#open++;
    const socket = net.connect({ host: this.#host, port: this.#port, noDelay: true });
    const connection: Connection = { socket, busy: undefined, buffer: Buffer.alloc(0) };
    socket.on('data', (chunk: Buffer) => this.#read(connection, chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      connection.failure = error.code ?? error.message;
    });
    socket.on('close', () => this.#lost(connection, connection.failure ?? 'ECONNRESET'));
    socket.setTimeout(this.#timeoutMs, () => socket.destroy());
    return connection;
  }

  #start(connection: Connection, pending: Pending): void {
    connection.busy = pending;
    connection.socket.write(pending.head + pending.body);
  }

  #read(connection: Connection, chunk: Buffer): void {
    connection.buffer = connection.buffer.length === 0 ? chunk : Buffer.concat([connection.buffer, chunk]);
    const pending = connection.busy;
    const end = connection.buffer.indexOf(headerEnd);
    if (!pending || end < 0) return;
    const head = connection.buffer.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1];
    if (length === undefined) {
      connection.socket.destroy();
      pending.reject(new Error('answer without content-length'));
      return;
    }
    const total = end + headerEnd.length + Number(length);
    if (connection.buffer.length < total) return;
    const status = Number(head.slice(9, 12));
    const answer: LeanAnswer =
      status === 200 && !pending.wantBody ? { status } : { status, body: connection.buffer.subarray(end + headerEnd.length, total).toString('utf8') };
    connection.buffer = connection.buffer.subarray(total);
    connection.busy = undefined;
    if (/\r\nconnection:[ \t]*close/i.test(head)) connection.socket.destroy();
    else this.#release(connection);
    pending.resolve(answer);
  }

  #release(connection: Connection): void {
    const next = this.#waiting.shift();
    if (next) this.#start(connection, next);
    else this.#idle.push(connection);
  }

  #lost(connection: Connection, code: string): void {
    this.#open--;
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    connection.busy?.reject(Object.assign(new Error(code), { code }));
    connection.busy = undefined;
    // A request that waited for a free connection gets a new one.
    const next = this.#waiting.shift();
    if (next && !this.#closed) this.#start(this.#connect(), next);
  }
}
