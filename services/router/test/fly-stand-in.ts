import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnFreePort } from '@platform/testkit/local-server';

interface Volume {
  id: string;
  name: string;
  region: string;
  size_gb: number;
  state: string;
  dir: string;
}

interface Machine {
  id: string;
  name: string;
  state: 'created' | 'starting' | 'started' | 'stopping' | 'stopped' | 'destroyed';
  region: string;
  private_ip: string;
  config: { image: string; env: Record<string, string>; mounts: { volume: string; path: string }[] };
  process?: ChildProcess;
}

/**
 * A local server speaking the routes and shapes of Fly's Machines API that the router uses (Fly cannot be reached
 * from here). A started machine is a real daemon process: the image is taken to be the daemon's bundle, and its volume
 * is a folder mounted as the daemon's /data. Its private address is IPv6, as Fly gives every machine (`fdaa:…`), so
 * the router reaches it over IPv6: `::1`, the only IPv6 loopback address, which every machine shares (so at most one
 * runs at a time on the daemon port). With `privateIps: 'ipv4'` (a machine without IPv6) each gets 127.0.0.N instead.
 */
export async function startFlyStandIn(options: {
  appName: string;
  token: string;
  daemonEntry: string;
  nodeFlags: readonly string[];
  privateIps: 'ipv6' | 'ipv4';
}) {
  const volumes = new Map<string, Volume>();
  const machines = new Map<string, Machine>();
  const requests: { method: string; path: string; body: unknown }[] = [];
  const root = mkdtempSync(join(tmpdir(), 'fly-stand-in-'));
  let nextIp = 10;
  const privateIp = () => (options.privateIps === 'ipv6' ? '::1' : `127.0.0.${nextIp++}`);
  const id = () => randomBytes(7).toString('hex');
  const waiters: (() => void)[] = [];
  const changed = () => {
    for (const wake of waiters.splice(0)) wake();
  };

  const start = (machine: Machine) => {
    const volume = volumes.get(machine.config.mounts[0]?.volume ?? '');
    machine.state = 'starting';
    const env = { ...machine.config.env, PATH: process.env.PATH ?? '', HOST: machine.private_ip, DATA_DIR: volume?.dir ?? join(root, machine.id) };
    machine.process = spawn(process.execPath, [...options.nodeFlags, options.daemonEntry], { env, stdio: 'ignore' });
    machine.process.once('exit', () => {
      if (machine.state !== 'destroyed') machine.state = 'stopped';
      changed();
    });
    // Fly reports `started` when the VM runs, before the app in it is ready: the router probes for that.
    machine.state = 'started';
    changed();
  };
  const stop = async (machine: Machine) => {
    const child = machine.process;
    machine.state = 'stopping';
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    machine.state = 'stopped';
    changed();
  };

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const url = new URL(request.url ?? '/', 'http://fly');
    requests.push({ method: request.method ?? '', path: url.pathname, body });
    const send = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    const view = (machine: Machine) => ({
      id: machine.id,
      name: machine.name,
      state: machine.state,
      region: machine.region,
      private_ip: machine.private_ip,
      config: machine.config,
    });
    if (request.headers.authorization !== `Bearer ${options.token}`) return send(401, { error: 'unauthorized' });
    const match = /^\/v1\/apps\/([^/]+)\/(volumes|machines)(?:\/([^/]+))?(?:\/(start|stop|wait))?$/.exec(url.pathname);
    if (!match || match[1] !== options.appName) return send(404, { error: 'not found' });
    const [, , kind, itemId, action] = match;
    if (kind === 'volumes') {
      if (request.method === 'POST' && !itemId) {
        const volume: Volume = { id: `vol_${id()}`, name: body.name, region: body.region, size_gb: body.size_gb, state: 'created', dir: join(root, body.name) };
        mkdirSync(volume.dir, { recursive: true });
        volumes.set(volume.id, volume);
        return send(200, volume);
      }
      if (request.method === 'GET' && !itemId) return send(200, [...volumes.values()]);
      const volume = volumes.get(itemId ?? '');
      if (!volume) return send(404, { error: 'volume not found' });
      if (request.method === 'DELETE') {
        volumes.delete(volume.id);
        rmSync(volume.dir, { recursive: true, force: true });
        return send(200, { ...volume, state: 'destroyed' });
      }
      return send(405, { error: 'method not allowed' });
    }
    if (request.method === 'POST' && !itemId) {
      const machine: Machine = { id: id(), name: body.name, state: 'created', region: body.region, private_ip: privateIp(), config: body.config };
      machines.set(machine.id, machine);
      if (!body.skip_launch) start(machine);
      return send(200, view(machine));
    }
    if (request.method === 'GET' && !itemId) return send(200, [...machines.values()].filter((machine) => machine.state !== 'destroyed').map(view));
    const machine = machines.get(itemId ?? '');
    if (!machine || machine.state === 'destroyed') return send(404, { error: 'machine not found' });
    if (request.method === 'GET' && !action) return send(200, view(machine));
    if (request.method === 'POST' && action === 'start') {
      const previous = machine.state;
      if (previous !== 'started') start(machine);
      return send(200, { previous_state: previous, migrated: false, new_host: '' });
    }
    if (request.method === 'POST' && action === 'stop') {
      await stop(machine);
      return send(200, { ok: true });
    }
    if (request.method === 'GET' && action === 'wait') {
      const wanted = url.searchParams.get('state');
      const deadline = Date.now() + Number(url.searchParams.get('timeout') ?? 60) * 1000;
      while (machine.state !== wanted && Date.now() < deadline) await new Promise<void>((resolve) => waiters.push(resolve));
      return machine.state === wanted ? send(200, { ok: true }) : send(408, { error: 'timeout' });
    }
    if (request.method === 'DELETE') {
      await stop(machine);
      machine.state = 'destroyed';
      return send(200, { ok: true });
    }
    return send(405, { error: 'method not allowed' });
  });
  const { port, close } = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    machines,
    volumes,
    requests,
    async close() {
      for (const machine of machines.values()) if (machine.state !== 'destroyed') await stop(machine);
      await close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
