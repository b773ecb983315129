import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@platform/testkit/eventually';
import { startNotesServer } from './fixtures/notes-mcp-server.ts';
import { railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon, toolStep } from './harness.ts';

const notesProgram = fileURLToPath(new URL('./fixtures/notes-mcp-server.ts', import.meta.url));
const counterSource = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Counter { uint256 public count; function bump() external { count += 1; } }
`;

async function ended(daemon: TestDaemon, id: string) {
  await daemon.daemon.runner.waitForEnd(id);
  return daemon.ok('GET', `/messages/async/${id}`);
}

describe('tools from MCP servers: the contract engine, and more servers over stdio and HTTP (the connector’s seam)', () => {
  let stack: Stack;
  let httpNotes: Awaited<ReturnType<typeof startNotesServer>>;
  let daemon: TestDaemon;

  before(async () => {
    stack = await startStack({ gateway: false, services: ['contracts'] });
    httpNotes = await startNotesServer();
    const servers = [
      { name: 'notes', command: process.execPath, args: [notesProgram] },
      { name: 'board', url: httpNotes.url, token_env: 'BOARD_TOKEN' },
      { name: 'gone', url: 'http://127.0.0.1:9/mcp' },
    ];
    daemon = await startDaemon({ ...stack.env, DAEMON_MCP_SERVERS: JSON.stringify(servers), BOARD_TOKEN: 'board-secret', DAEMON_UNGATED_TOOLS: 'board.write' });
  });
  after(async () => {
    await daemon?.stop();
    await httpNotes?.close();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('GET /tools lists every server’s tools with the read-only hint, and names the server that does not answer', async () => {
    const listed = await daemon.ok('GET', '/tools');
    const byName = new Map(listed.tools.map((tool: { name: string; read_only: boolean }) => [tool.name, tool.read_only]));
    assert.equal(byName.get('notes.read'), true);
    assert.equal(byName.get('notes.write'), false);
    assert.equal(byName.get('board.write'), false);
    assert.equal(byName.get('contracts.tachyon_compile'), true);
    assert.equal(byName.get('contracts.tachyon_deploy'), false);
    assert.deepEqual(
      listed.unavailable.map((entry: { server: string }) => entry.server),
      ['gone'],
    );
    const me = await daemon.ok('GET', '/me');
    assert.deepEqual(
      me.services.mcp_servers.map((server: { name: string; transport: string }) => [server.name, server.transport]),
      [
        ['notes', 'stdio'],
        ['board', 'http'],
        ['gone', 'http'],
      ],
    );
    assert.ok(!JSON.stringify(me).includes('board-secret'), 'no bearer in /me');
  });

  test('a stdio server’s writing tool waits at the policy’s gate; the HTTP one the user exempted does not; reads never do', async () => {
    stack.model.setScript(
      railScript({
        plans: [
          {
            steps: [
              toolStep('read', 'notes.read', {}),
              toolStep('write', 'notes.write', { text: 'buy milk' }, ['read']),
              toolStep('post', 'board.write', { text: 'meeting at 3' }),
            ],
          },
        ],
      }),
    );
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'note that I need milk and post the meeting' });
    await eventually(() => (daemon.daemon.book.state(id)?.gates ?? []).length > 0, 'a gate');
    const [gate] = (await daemon.ok('GET', `/intents/${id}/gates`)).pending;
    assert.equal(gate.node_id, 'write-approval');
    assert.match(gate.question, /writes outside your memory: notes\.write \{"text":"buy milk"\}/);
    await daemon.ok('POST', `/intents/${id}/gates/write-approval/answer`, { approved: true });
    const status = await ended(daemon, id);
    assert.equal(status.status, 'completed');
    const state = (await daemon.ok('GET', `/intents/${id}`)).state;
    assert.deepEqual(state.steps.find((step: { id: string }) => step.id === 'write').result, { written: 'buy milk', count: 1 });
    assert.deepEqual(httpNotes.notes, ['meeting at 3']);
    assert.equal(state.steps.filter((step: { kind: string }) => step.kind === 'gate').length, 1, 'only notes.write was gated');
  });

  test('the contract engine compiles through its MCP door with the agent’s DID; a deploy always waits for approval', async () => {
    stack.model.setScript(
      railScript({
        plans: [
          {
            steps: [
              toolStep('build', 'contracts.tachyon_compile', { sources: { 'src/Counter.sol': counterSource } }),
              toolStep('ship', 'contracts.tachyon_deploy', { chain_id: 'local', contract: 'Counter', project_id: { $ref: 'build.project_id' } }, ['build']),
            ],
          },
        ],
      }),
    );
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'compile and deploy a counter' });
    await eventually(() => (daemon.daemon.book.state(id)?.gates ?? []).length > 0, 'the deploy gate', 100_000);
    const state = (await daemon.ok('GET', `/intents/${id}`)).state;
    const build = state.steps.find((step: { id: string }) => step.id === 'build');
    assert.equal(build.status, 'done');
    assert.equal(build.result.success, true);
    assert.deepEqual(
      build.result.artifacts.map((artifact: { name: string }) => artifact.name),
      ['Counter'],
    );
    const ship = state.steps.find((step: { id: string }) => step.id === 'ship');
    assert.equal(ship.arguments.idempotency_key, `${id}:ship`, 'the daemon owns the deploy’s idempotency key');
    const [gate] = (await daemon.ok('GET', `/intents/${id}/gates`)).pending;
    assert.match(gate.question, /deploys contract Counter on chain local/);
    assert.match(gate.question, new RegExp(`"project_id":"${build.result.project_id}"`), 'the question shows the resolved arguments');
    await daemon.ok('POST', `/intents/${id}/gates/${gate.node_id}/answer`, { approved: false, answer: 'not today' });
    assert.equal((await ended(daemon, id)).status, 'completed');
  });

  test('DAEMON_UNGATED_TOOLS cannot exempt money or deploys, and a plan using an unreachable server fails saying so', async () => {
    const exempting = await startDaemon({
      ...stack.env,
      DAEMON_UNGATED_TOOLS: 'contracts.tachyon_deploy',
      DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'gone', url: 'http://127.0.0.1:9/mcp' }]),
    });
    try {
      stack.model.setScript(railScript({ plans: [{ steps: [toolStep('ship', 'contracts.tachyon_deploy', { chain_id: 'local', contract: 'Counter' })] }] }));
      const { intent_id: id } = await exempting.ok('POST', '/messages/async', { prose: 'deploy' });
      await eventually(() => (exempting.daemon.book.state(id)?.gates ?? []).length > 0, 'still gated');
      await exempting.ok('POST', `/intents/${id}/cancel`, {});
      stack.model.setScript(railScript({ plans: [{ steps: [toolStep('x', 'gone.anything', {})] }] }));
      const { intent_id: broken } = await exempting.ok('POST', '/messages/async', { prose: 'use gone' });
      const status = await ended(exempting, broken);
      assert.equal(status.result.reason, 'plan_invalid');
      assert.match(status.result.error, /\(unreachable: gone: /);
    } finally {
      await exempting.stop();
      removeFolder(exempting.dataDir);
    }
  });
});
