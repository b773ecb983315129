import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { idleRssBoundMb, memoryOf } from '../bench/start-and-memory.ts';
import { bundleEntry, daemonNodeFlags, ensureBundle } from '../scripts/bundle.mjs';
import { daemonToken } from './harness.ts';

const notesProgram = fileURLToPath(new URL('./fixtures/notes-mcp-server.ts', import.meta.url));

/** The bundle as the router starts it, on a fresh data folder; resolves once it has started (its one collection done). */
async function startBundle(t: TestContext, env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess }> {
  await ensureBundle();
  const dataDir = mkdtempSync(join(tmpdir(), 'daemon-bundle-'));
  const child = spawn(process.execPath, [...daemonNodeFlags, bundleEntry], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', PLATFORM_DAEMON_TOKEN: daemonToken, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk;
      const listening = /"url":"(http:\/\/[^"]+)".*"msg":"daemon listening"/.exec(text);
      if (listening) resolve(listening[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the bundle exited with ${code}: ${text}`)));
  });
  return { url, child };
}

test('the bundle the router starts answers like the sources, and loads the MCP client when a tool server is asked', async (t) => {
  const { url } = await startBundle(t, {
    DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'notes', command: process.execPath, args: [notesProgram] }]),
  });
  assert.equal((await httpCall(url, 'GET', '/healthz')).json.data.status, 'ok');
  const me = await httpCall(url, 'GET', '/me', { bearer: daemonToken });
  assert.match(me.json.data.did, /^did:platform:[0-9a-f-]{36}:[0-9a-f]{16}$/);
  const tools = await httpCall(url, 'GET', '/tools', { bearer: daemonToken });
  assert.deepEqual(
    tools.json.data.tools.map((tool: { name: string }) => tool.name),
    ['notes.read', 'notes.write'],
  );
  assert.equal((await httpCall(url, 'GET', '/me')).status, 401);
});

test(`the bundle idles under ${idleRssBoundMb} MB resident once started (the router runs one per user)`, async (t) => {
  const { url, child } = await startBundle(t);
  assert.equal((await httpCall(url, 'GET', '/healthz')).status, 200);
  let rssMb = Number.NaN;
  // Freed pages go back to the system shortly after the collection at start: poll, do not sleep.
  await pollUntil(
    () => {
      rssMb = memoryOf(child.pid as number).rssMb;
      return rssMb < idleRssBoundMb;
    },
    () => `the idle bundle to hold under ${idleRssBoundMb} MB resident (it holds ${rssMb.toFixed(1)} MB)`,
    { timeoutMs: 5_000 },
  );
});
