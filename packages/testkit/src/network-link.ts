import { createServer, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnFreePort } from './local-server.ts';

/**
 * The browser's network link, as a forward HTTP proxy the browser sends everything through (Chromium's
 * `--proxy-server`, with loopback not bypassed): `cut()` drops every open connection and refuses new ones until
 * `restore()`, as a lost Wi-Fi would. Emulated offline mode is not enough: Chromium keeps a stream that is already open.
 */
export async function startNetworkLink() {
  const sockets = new Set<Socket>();
  let down = false;
  const server = createServer((request, response) => {
    if (down) return void request.socket.destroy();
    const target = new URL(request.url ?? '/');
    const upstream = httpRequest(
      { hostname: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  server.on('connection', (socket: Socket) => {
    if (down) return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listening = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () => listening.close(),
  };
}
