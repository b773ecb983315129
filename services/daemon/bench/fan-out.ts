import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { p50, p99 } from '@platform/testkit/stats';
import { bundleEntry, daemonNodeFlags, ensureBundle } from '../scripts/bundle.mjs';
import { startFloor } from './fan-out-floor.ts';
import { type SubscribersProcess, startSubscribers } from './fan-out-subscribers.ts';

/*
 * SSE fan-out to many subscribers: the daemon (bundle, its own process) with `subscribers` connections to /events from
 * a third process, fed by chat turns (each publishes `message` and `say`), paced so the subscribers keep up; beside it
 * the floor broadcaster with the same subscribers and frames.
 */

export interface FanOutFigures {
  toLastP50: number;
  toLastP99: number;
  spreadP50: number;
  events: number;
}

const token = 'bench-daemon-token';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function collect(subscribers: SubscribersProcess, count: number, expected: number): Promise<FanOutFigures> {
  for (let wait = 0; wait < 200; wait++) {
    const { events } = await subscribers.ask('results', { count });
    if (events >= expected) break;
    await pause(25);
  }
  const results = await subscribers.ask('results', { count });
  return { toLastP50: p50(results.toLast), toLastP99: p99(results.toLast), spreadP50: p50(results.spread), events: results.events };
}

async function daemonFanOut(modelUrl: string, count: number, turns: number, port: number): Promise<FanOutFigures> {
  await ensureBundle();
  const dataDir = mkdtempSync(join(tmpdir(), 'daemon-fanout-'));
  const env = {
    PATH: process.env.PATH ?? '',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PLATFORM_GATEWAY_URL: modelUrl,
    PLATFORM_DAEMON_TOKEN: token,
    DAEMON_MAX_SUBSCRIBERS: String(count + 10),
  };
  const daemon = spawn(process.execPath, [...daemonNodeFlags, bundleEntry], { env, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const subscribers = await startSubscribers();
  try {
    while (
      !(await fetch(`${url}/healthz`).then(
        (response) => response.ok,
        () => false,
      ))
    )
      await pause(5);
    await subscribers.ask('open', { url: `${url}/events`, count, token });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let turn = 0; turn < turns; turn++) {
      await fetch(`${url}/chat`, { method: 'POST', headers, body: JSON.stringify({ message: `hello ${turn}`, conversation_id: 'bench' }) });
      await pause(40);
    }
    return await collect(subscribers, count, turns * 2);
  } finally {
    await subscribers.ask('close');
    subscribers.kill();
    daemon.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function floorFanOut(count: number, events: number): Promise<FanOutFigures> {
  const floor = await startFloor();
  const subscribers = await startSubscribers();
  try {
    await subscribers.ask('open', { url: `${floor.info.url}/events`, count, token });
    for (let event = 0; event < events; event++) {
      await fetch(`${floor.info.url}/publish`, { method: 'POST' });
      await pause(20);
    }
    return await collect(subscribers, count, events);
  } finally {
    await subscribers.ask('close');
    subscribers.kill();
    floor.kill();
  }
}

export async function measureFanOut(modelUrl: string, options: { subscribers: number; turns: number; port: number }) {
  const daemon = await daemonFanOut(modelUrl, options.subscribers, options.turns, options.port);
  const floor = await floorFanOut(options.subscribers, options.turns * 2);
  return { daemon, floor };
}
