import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { daemonOwnerTokens, memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { testEngines } from '@platform/testkit/databases';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { loadConfig } from '../src/config.ts';
import { daemonLaunch } from '../src/main.ts';
import { type IdentityProvider, invite, startIdentityProvider, startRouter } from './harness.ts';

const [pglite] = testEngines();
const memoryRoot = 'memory-root-token-for-router-tests';
/** A root for every owner-scoped service (the memory server's is the one a real memory server runs with). */
const roots = Object.fromEntries(daemonOwnerTokens.map(({ setting }) => [setting, `${setting.toLowerCase()}-root-for-router-tests`]));
roots.MEMORY_MCP_TOKEN = memoryRoot;

/** The environment a running daemon process was started with, as the kernel keeps it. */
function daemonEnvironment(volumes: string, userId: string): Record<string, string> {
  const { pid } = JSON.parse(readFileSync(join(volumes, userId, 'router-run.json'), 'utf8')) as { pid: number };
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((entry) => entry !== '');
  return Object.fromEntries(pairs.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

describe("each user's daemon reaches the one memory server as its own user", () => {
  let idp: IdentityProvider;
  let memory: ServiceProcess;
  let router: Awaited<ReturnType<typeof startRouter>>;
  const users = [randomUUID(), randomUUID()] as const;
  const tokens: string[] = [];

  before(async () => {
    idp = await startIdentityProvider();
    memory = await startServiceProcess('memory', { MEMORY_MCP_TOKEN: memoryRoot });
    router = await startRouter(pglite!, idp, { env: { PLATFORM_MEMORY_URL: memory.url, ...roots } });
    for (const sub of users) {
      const token = await idp.token({ sub });
      await invite(router, token);
      tokens.push(token);
    }
  });
  after(async () => {
    await router?.dispose();
    await memory?.stop();
    await idp?.close();
  });

  const remember = async (bearer: string, content: string) => {
    const response = await fetch(`${memory.url}/v1/remember`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ memories: [{ content }] }),
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: { memories: { id: string }[] } }).data.memories[0]?.id as string;
  };

  test('two daemons get two different memory tokens, each its own user’s, and neither gets the root token', async () => {
    for (const token of tokens) assert.equal((await router.call('GET', '/me', token)).status, 200);
    const [first, second] = users.map((user) => daemonEnvironment(router.volumes, user));
    const verifier = new OwnerTokens(memoryRoot, memoryOwnerTokens);
    for (const [index, environment] of [first, second].entries()) {
      assert.notEqual(environment?.MEMORY_MCP_TOKEN, undefined);
      assert.deepEqual(verifier.verify(environment?.MEMORY_MCP_TOKEN ?? ''), { ok: true, owner: users[index] });
      assert.ok(!Object.values(environment ?? {}).some((value) => value.includes(memoryRoot)), 'the root memory token is in no setting of the daemon');
    }
    assert.notEqual(first?.MEMORY_MCP_TOKEN, second?.MEMORY_MCP_TOKEN);
  });

  test('two daemons get different tokens for every owner-scoped service, each its own user’s, and no root', async () => {
    const [first, second] = users.map((user) => daemonEnvironment(router.volumes, user));
    for (const { setting, scheme } of daemonOwnerTokens) {
      const verifier = new OwnerTokens(roots[setting] as string, scheme);
      assert.deepEqual(verifier.verify(first?.[setting] ?? ''), { ok: true, owner: users[0] }, setting);
      assert.deepEqual(verifier.verify(second?.[setting] ?? ''), { ok: true, owner: users[1] }, setting);
      for (const environment of [first, second])
        assert.ok(!Object.values(environment ?? {}).some((value) => value.includes(roots[setting] as string)), `no root ${setting}`);
    }
  });

  test('ROUTER_DAEMON_ENV naming a root is refused at start', () => {
    for (const { setting } of daemonOwnerTokens)
      assert.throws(() => loadConfig({ ROUTER_DAEMON_ENV: `LOG_LEVEL,${setting}` }, daemonLaunch), new RegExp(`ROUTER_DAEMON_ENV may not list ${setting}`));
  });

  test("a user's daemon lists and forgets only its own user's memories", async () => {
    const minter = new OwnerTokens(memoryRoot, memoryOwnerTokens);
    const mine = await remember(minter.mint(users[0]), 'The user keeps bees on the roof.');
    const theirs = await remember(minter.mint(users[1]), 'The user restores old bicycles.');
    const operators = await remember(memoryRoot, 'The deployment’s own note.');
    const listed = async (token: string) => {
      const answer = await router.call('GET', '/memories', token);
      assert.equal(answer.status, 200, answer.text);
      return answer.json.data.memories.map((entry: { id: string }) => entry.id);
    };
    assert.deepEqual(await listed(tokens[0] as string), [mine]);
    assert.deepEqual(await listed(tokens[1] as string), [theirs]);
    const refused = await router.call('DELETE', `/memories/${mine}`, tokens[1] as string);
    assert.equal(refused.status, 404, refused.text);
    assert.deepEqual(await listed(tokens[0] as string), [mine], 'still there for its owner');
    assert.ok(!(await listed(tokens[1] as string)).includes(operators));
  });
});
