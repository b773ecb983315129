import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { repo } from '../src/service-settings.ts';

interface Instruction {
  keyword: string;
  args: string;
}

/** The Containerfile's stages: each FROM and the instructions after it (comments dropped, continuations joined). */
function stages(text: string): { from: string; instructions: Instruction[] }[] {
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  const found: { from: string; instructions: Instruction[] }[] = [];
  for (const line of lines.map((entry) => entry.trim()).filter((entry) => entry !== '' && !entry.startsWith('#'))) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') found.push({ from: instruction.args, instructions: [] });
    else found.at(-1)?.instructions.push(instruction);
  }
  return found;
}

describe('the Containerfile (checked on every CI run; the image itself is built and run by scripts/image/check-image.sh)', () => {
  const text = readFileSync(join(repo, 'Containerfile'), 'utf8');
  const [tree, final] = stages(text);

  test('two stages: `tree` builds, the final stage only copies what runs and describes how to run it', () => {
    assert.match(tree?.from ?? '', / AS tree$/);
    assert.equal(final?.from, '$' + '{BASE}', 'FROM the BASE argument');
    const keywords = final?.instructions.map((instruction) => instruction.keyword) ?? [];
    assert.ok(!keywords.includes('RUN'), 'no RUN in the final stage: nothing is installed there, and it builds where RUN cannot');
    const of = (keyword: string) => final?.instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args) ?? [];
    assert.deepEqual(of('COPY'), ['--from=tree /tree/root/ /', '--from=tree --chown=10001:10001 /tree/volume/ /']);
    assert.deepEqual(of('USER'), ['10001:10001'], 'a non-root numeric user (runAsNonRoot can check it)');
    assert.deepEqual(of('VOLUME'), ['["/data"]']);
    assert.match(of('HEALTHCHECK')[0] ?? '', /CMD \["\/usr\/local\/bin\/node", "\/opt\/platform\/healthcheck\.mjs"\]$/);
    assert.deepEqual(of('ENTRYPOINT'), ['["/usr/local/bin/tini", "--", "/usr/local/bin/platform"]']);
    assert.deepEqual(of('CMD'), ['["daemon"]']);
    const labels = of('LABEL').join(' ');
    for (const label of ['source', 'version', 'revision']) assert.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${label}="\\$\\{[A-Z]+\\}"`), label);
    assert.match(of('ENV').join(' '), /DATA_DIR=\/data/);
  });

  test('the build context leaves out what the tree stage makes itself; the image scripts parse', () => {
    const ignored = readFileSync(join(repo, '.containerignore'), 'utf8').split('\n');
    for (const entry of ['.git', '**/node_modules', '**/dist', '.data']) assert.ok(ignored.includes(entry), entry);
    assert.equal(readFileSync(join(repo, '.dockerignore'), 'utf8'), readFileSync(join(repo, '.containerignore'), 'utf8'));
    for (const script of ['build-tree.sh', 'build-image.sh', 'check-image.sh', 'image-sizes.sh', 'platform']) {
      const run = spawnSync('sh', ['-n', join(repo, 'scripts', 'image', script)], { encoding: 'utf8' });
      assert.equal(run.status, 0, `${script}: ${run.stderr}`);
    }
  });

  test('HEALTHCHECK: 0 on /healthz 200, 1 otherwise; as settlement’s readiness, 0 only for the sequencer', async () => {
    let health = 200;
    let role = 'standby';
    const server = createServer((request, response) => {
      if (request.url === '/healthz') response.writeHead(health).end('{}');
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, data: { role } }));
    });
    const { port, close } = await listenOnFreePort(server);
    const check = async (...args: string[]) => {
      const child = spawn(process.execPath, [join(repo, 'scripts', 'image', 'healthcheck.mjs'), ...args], { env: { PORT: String(port) }, stdio: 'ignore' });
      return (await once(child, 'exit'))[0];
    };
    try {
      assert.equal(await check(), 0);
      assert.equal(await check('sequencer'), 1, 'a standby is not ready');
      role = 'sequencer';
      assert.equal(await check('sequencer'), 0);
      health = 503;
      assert.equal(await check(), 1);
    } finally {
      await close();
    }
  });
});
