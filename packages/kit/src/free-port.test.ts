import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePort } from './free-port.ts';

/** The kernel's ephemeral range, where `listen(0)` and outgoing connections take their ports. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return [low as number, high as number];
  } catch {
    return [32_768, 60_999];
  }
}

describe('freePort', () => {
  it('hands out ports below the kernel’s ephemeral range, where no listen(0) or outgoing connection takes them meanwhile', async () => {
    const [low] = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    for (const port of ports) {
      assert.ok(port >= 1024 && port < Math.min(low, 32_768), `port ${port}`);
    }
    assert.ok(new Set(ports).size > 30, 'spread at random, not one port for everyone');
  });

  it('never hands one port to two callers within a minute, in one process or two, though none is listened on yet', async () => {
    // 300 draws each out of 12,768 ports: without the machine-wide claims two would meet almost surely (birthday bound).
    const script = `import { freePort } from ${JSON.stringify(new URL('./free-port.ts', import.meta.url).href)};
      const ports = []; for (let i = 0; i < 300; i++) ports.push(await freePort()); console.log(JSON.stringify(ports));`;
    const other = new Promise<number[]>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout)))),
    );
    const mine: number[] = [];
    for (let i = 0; i < 300; i++) mine.push(await freePort());
    const all = [...mine, ...(await other)];
    assert.equal(all.length, 600);
    assert.equal(new Set(all).size, 600, 'a port was handed out twice');
  });

  it('hands out a port that can then be listened on', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
