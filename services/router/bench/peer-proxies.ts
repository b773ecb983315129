import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import httpProxy from '@fastify/http-proxy';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import Fastify from 'fastify';

/*
 * The peers, in a process of their own, both in front of the same daemon and doing what the router does to a request
 * (the client's bearer replaced by the daemon's): @fastify/http-proxy (Fastify's own reverse proxy, on undici), and the
 * least a Node process can do, a plain node:http forwarder. Neither checks a JWT or looks up a user: the router's
 * extra work shows in the difference.
 */

async function main(args: { upstream: string; token: string }): Promise<void> {
  const upstream = new URL(args.upstream);
  const fastify = Fastify({ logger: false });
  await fastify.register(httpProxy, {
    upstream: args.upstream,
    replyOptions: { rewriteRequestHeaders: (_request, headers) => ({ ...headers, authorization: `Bearer ${args.token}` }) },
  });
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const plain = http.createServer((request, response) => {
    const forwarded = http.request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: request.method,
        agent,
        headers: { ...request.headers, authorization: `Bearer ${args.token}` },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
  serveChild({}, { fastify: `http://127.0.0.1:${port(fastify.server)}`, plain: `http://127.0.0.1:${port(plain)}` });
}

export type PeerProxies = Child<Record<string, never>, { fastify: string; plain: string }>;

export function startPeerProxies(upstream: string, token: string): Promise<PeerProxies> {
  return forkChild(fileURLToPath(import.meta.url), { upstream, token });
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? '{}'));
