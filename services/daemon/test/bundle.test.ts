import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { httpCall } from '@platform/testkit/http-call';
import { bundleEntry, daemonNodeFlags, ensureBundle } from '../scripts/bundle.mjs';
import { daemonToken } from './harness.ts';

const notesProgram = fileURLToPath(new URL('./fixtures/notes-mcp-server.ts', import.meta.url));

test('the bundle the router starts answers like the sources, and loads the MCP client when a tool server is asked', async () => {
  await ensureBundle();
  const dataDir = mkdtempSync(join(tmpdir(), 'daemon-bundle-'));
  const child = spawn(process.execPath, [...daemonNodeFlags, bundleEntry], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      PLATFORM_DAEMON_TOKEN: daemonToken,
      DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'notes', command: process.execPath, args: [notesProgram] }]),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        text += chunk;
        const listening = /Server listening at (http:\/\/[^"\s]+)/.exec(text);
        if (listening) resolve(listening[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`the bundle exited with ${code}: ${text}`)));
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
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
});
