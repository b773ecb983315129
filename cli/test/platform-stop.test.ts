import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { pollUntil } from '@platform/testkit/eventually';
import { alive, type RunningPlatform, startPlatform } from '@platform/testkit/platform-up';
import { json } from './agent-cli-harness.ts';
import {
  assertDaemonHoldsItsUsersBearer,
  assertDevelopmentIdentity,
  assertNoModelProviderIsNamed,
  assertProtectedRoutesRefuse,
  assertTokenOpensDaemon,
} from './platform-up-checks.ts';

/*
 * Issue 16: Ctrl-C stops everything, children included, with no orphan and no lost write; a crash of `up` leaves no
 * process behind either. `up` runs as a child in a process group of its own, as a shell runs a job, and the harness's
 * `stop` sends SIGINT to that whole group, as a terminal's Ctrl-C does.
 */

/** Pino's error and fatal lines, and any line naming a refused connection (a child that died before its turn). */
const errorLine = /"level":(50|60)|ECONNREFUSED|Error:/;

/** The kinds of child `up` runs: the chain node, the router's per-user daemon, a connector MCP proxy, the watcher. */
function kinds(processes: readonly { command: string }[]): string[] {
  const kind = (command: string) =>
    /anvil/.test(command)
      ? 'anvil'
      : /daemon\/dist\/main\.js/.test(command)
        ? 'daemon'
        : /mcp connector/.test(command)
          ? 'mcp proxy'
          : /^\/bin\/sh -c/.test(command)
            ? 'watcher'
            : command;
  return [...new Set(processes.map((entry) => kind(entry.command)))].sort();
}

/**
 * Brings up every kind of child: a daemon the router starts for the development user, and a connector MCP proxy
 * under it and under the daemon `up` runs itself (each daemon starts its proxies when its tools are first listed).
 */
async function startChildren(platform: RunningPlatform): Promise<void> {
  const tools = [
    fetch(`${platform.url('router')}/tools`, { headers: { authorization: `Bearer ${await platform.token()}` } }),
    fetch(`${platform.url('daemon')}/tools`, { headers: { authorization: `Bearer ${await platform.secret('PLATFORM_DAEMON_TOKEN')}` } }),
  ];
  for (const answer of await Promise.all(tools)) assert.equal(answer.status, 200, await answer.text());
}

/** What a first start must show (the root README's table): every service up, wired, secure by default. */
async function assertStartedAsDocumented(platform: RunningPlatform, dataDir: string, routerInternal: string): Promise<void> {
  for (const name of ['scheduler', 'settlement', 'marketplace', 'gateway', 'contracts', 'memory', 'connector']) {
    const { url, data } = platform.services.get(name) ?? { url: '', data: '' };
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(data, `PGlite in ${join(dataDir, name)}`, 'each service gets its own folder under DATA_DIR');
    const response = await fetch(`${url}/healthz`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { ok: boolean; data: { db: boolean } };
    assert.deepEqual([body.ok, body.data.db], [true, true]);
  }
  // Every row of the ready table answers /healthz (the identity provider's answered 404).
  for (const [name, { url }] of platform.services) assert.equal((await fetch(`${url}/healthz`)).status, 200, `${name} ${url}/healthz`);
  assert.ok(platform.services.has('identity'), 'the development identity provider is a row');
  // Settlement deployed its vault on the local chain the contract engine started, and remembers it.
  const info = (await (await fetch(`${platform.url('settlement')}/v1/info`)).json()) as { data: { vault_address: string; chain: { mode: string } } };
  assert.equal(info.data.chain.mode, 'live', `settlement has no chain; what up logged:\n${platform.output().stderr}`);
  assert.match(info.data.vault_address, /^0x[0-9a-fA-F]{40}$/);
  const remembered = JSON.parse(await readFile(join(dataDir, 'settlement', 'chain-31337.json'), 'utf8')) as { vault: string };
  assert.equal(remembered.vault, info.data.vault_address);
  // The marketplace deployed its service registry on the same chain (development).
  const registry = (await (await fetch(`${platform.url('marketplace')}/v1/registry`)).json()) as { data: { enabled: boolean } };
  assert.equal(registry.data.enabled, true);
  // The daemon keeps files, not a database, and is wired to the services started before it.
  const daemonUrl = platform.url('daemon');
  assert.equal(platform.services.get('daemon')?.data, `files in ${join(dataDir, 'daemon')}`);
  // Secure by default: every service refuses a protected route without its credentials, the daemon included, which
  // answers only its own user's bearer, derived from the root secret `up` generated.
  await assertProtectedRoutesRefuse(platform, routerInternal);
  const daemonBearer = await assertDaemonHoldsItsUsersBearer(platform);
  // The lines printed to paste: through the router, with the development user's token (run below as printed).
  const { stdout, stderr } = platform.output();
  assert.ok(stdout.includes(`DAEMON_URL=${platform.url('router')} PLATFORM_DAEMON_TOKEN=$(DATA_DIR=${dataDir} npx platform token)`), stdout);
  assert.doesNotMatch(stdout, /^\s+router\s+no identity provider/m, 'the development identity provider configures the router');
  assert.match(stdout, /^\s+gateway\s+no model provider: set GATEWAY_UPSTREAM_URL/m, 'the table says the gateway has no provider');
  // No upstream behind the gateway: chat and the pasted delegate say so at once, naming the setting.
  await assertNoModelProviderIsNamed(platform, daemonBearer);
  const bearer = { authorization: `Bearer ${daemonBearer}` };
  const me = (await (await fetch(`${daemonUrl}/me`, { headers: bearer })).json()) as { data: { services: Record<string, { url: string } | null> } };
  for (const name of ['gateway', 'memory', 'contracts', 'scheduler', 'settlement'])
    assert.match(me.data.services[name]?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+/, name);
  // The connector's tools reach the daemon through its stdio proxy, started with the daemon's key.
  const tools = (await (await fetch(`${daemonUrl}/tools`, { headers: bearer })).json()) as { data: { tools: { name: string }[]; unavailable: unknown[] } };
  assert.deepEqual(tools.data.unavailable, []);
  assert.ok(
    tools.data.tools.some((tool) => tool.name === 'connector.google-workspace_mail_send'),
    JSON.stringify(tools.data.tools.map((t) => t.name)),
  );

  // No service started open or on a built-in development secret, so none said so.
  assert.doesNotMatch(stderr, /every path is open|routes are open|is empty|development secret/, stderr);
}

/** What `up` must have started for the test to mean something (others may come and go: the Solidity test process, esbuild rebuilding the daemon's bundle). */
const expectedKinds = ['anvil', 'daemon', 'mcp proxy', 'watcher'];

test('a first start as documented, its development user signed in through the identity provider; Ctrl-C to up’s process group: exit 0, no process left, no error logged; every acknowledged write and the user’s token still good after a restart; then up killed hard (SIGKILL): its children stop on their own within seconds', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-stop-'));
  const home = await mkdtemp(join(tmpdir(), 'platform-stop-home-'));
  // The same chain port on both starts, as with the default 8545; the router's internal listener where the test knows it.
  const routerInternal = `127.0.0.1:${await freePort()}`;
  const env = { CONTRACTS_LOCAL_RPC_URL: `http://127.0.0.1:${await freePort()}`, ROUTER_INTERNAL_ADDR: routerInternal };
  let platform = await startPlatform({ dataDir, env });
  try {
    await assertStartedAsDocumented(platform, dataDir, `http://${routerInternal}`);
    const developer = await assertDevelopmentIdentity(platform);
    const agent = async (args: readonly string[], file = 'bob.json') => {
      const run = await platform.run(args, {
        HOME: home,
        PLATFORM_AGENT_FILE: join(home, file),
        PLATFORM_SETTLEMENT_URL: platform.url('settlement'),
        LEDGER_TOKEN: await platform.secret('LEDGER_TOKEN'),
        PLATFORM_SCHEDULER_URL: platform.url('scheduler'),
        SCHEDULER_TOKEN: await platform.secret('SCHEDULER_TOKEN'),
        // The development user's agent, through the router: `agent use` links a CLI key with it.
        DAEMON_URL: platform.url('router'),
        PLATFORM_DAEMON_TOKEN: developer.token,
      });
      assert.equal(run.code, 0, `platform ${args.join(' ')}: ${run.stderr}`);
      return json(run);
    };
    const bob = await agent(['agent', 'new', '--json']);
    const carol = await agent(['agent', 'new', '--json'], 'carol.json');
    await agent(['deposit', '5', '--faucet', '--json']);
    const paid = await agent(['pay', carol.did, '1.25', '--json']);
    // An alarm wakes the agent of the key that made it: the development user's, linked with `agent use`.
    await agent(['agent', 'use', '--json'], 'developer.json');
    const alarm = await agent(['alarm', 'create', 'water the plants', '--in', '1d', '--json'], 'developer.json');
    await startChildren(platform);
    const running = kinds(platform.processes());
    assert.ok(
      expectedKinds.every((kind) => running.includes(kind)),
      JSON.stringify(platform.processes()),
    );

    // stop() sends SIGINT to the group and fails naming any process of the group, or below up, still running.
    assert.equal(await platform.stop(), 0, platform.output().stderr);
    const { stdout, stderr } = platform.output();
    const errors = `${stdout}\n${stderr}`.split('\n').filter((line) => errorLine.test(line));
    assert.deepEqual(errors, [], 'a clean stop logs no error');

    platform = await startPlatform({ dataDir, env });
    // The development user's token from before the restart still opens their daemon.
    await assertTokenOpensDaemon(platform, developer.token, developer.userId);
    assert.equal((await agent(['balance', '--json'])).balance, '3.750000');
    assert.equal((await agent(['balance', '--json'], 'carol.json')).balance, '1.250000');
    const receipt = await fetch(`${platform.url('settlement')}/v1/receipt/${paid.seq}`);
    assert.equal(receipt.status, 200, 'the payment’s receipt is still served');
    const alarms = await agent(['alarm', 'list', '--json'], 'developer.json');
    assert.deepEqual(
      alarms.alarms.map((entry: { id: string; wake_message: string }) => [entry.id, entry.wake_message]),
      [[alarm.id, 'water the plants']],
    );
    assert.ok(bob.did);

    // Killed hard: the chain node, the router's daemons and their MCP proxies stop on their own (the watcher).
    await startChildren(platform);
    const children = await platform.crash();
    const started = kinds(children);
    assert.ok(
      expectedKinds.every((kind) => started.includes(kind)),
      JSON.stringify(children),
    );
    // The watcher's grace is 10 s (a daemon drains first); every one of them must be gone well within that.
    await pollUntil(
      () => children.every((child) => !alive(child.pid)),
      () => `still running: ${JSON.stringify(children.filter((child) => alive(child.pid)))}`,
      { timeoutMs: 15_000 },
    );
  } finally {
    await platform.kill();
    await rm(dataDir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  }
});
