import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cleanEnv, limitMs, platform, runToExit, upLimitMs, waitForLine, within } from './platform-process.ts';

test('platform up starts every service, prints the table, each answers /healthz, and it exits 0 on SIGTERM', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-up-'));
  const child = platform(['up'], cleanEnv({ DATA_DIR: dataDir, PORT: '0', SCHEDULER_DISPATCHER: 'false' }));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const stdout: string[] = [];
  try {
    await within(waitForLine(child, /npx platform delegate/, stdout), upLimitMs, 'the last line').catch((error: Error) => {
      throw new Error(`${error.message}\nstdout:\n${stdout.join('\n')}\nstderr:\n${stderr}`);
    });
    for (const name of ['scheduler', 'settlement', 'marketplace', 'gateway', 'contracts', 'memory', 'connector']) {
      const row = stdout.find((line) => line.startsWith(`${name} `)) ?? '';
      const [, url, data] = row.split(/\s{2,}/);
      assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(data, `PGlite in ${join(dataDir, name)}`, 'each service gets its own folder under DATA_DIR');
      const response = await fetch(`${url}/healthz`);
      assert.equal(response.status, 200);
      const body = (await response.json()) as { ok: boolean; data: { db: boolean } };
      assert.deepEqual([body.ok, body.data.db], [true, true]);
    }
    // Settlement deployed its vault on the local chain the contract engine started, and remembers it.
    const [, settlementUrl] = (stdout.find((line) => line.startsWith('settlement ')) ?? '').split(/\s{2,}/);
    const info = (await (await fetch(`${settlementUrl}/v1/info`)).json()) as { data: { vault_address: string; chain: { mode: string } } };
    assert.equal(info.data.chain.mode, 'live');
    assert.match(info.data.vault_address, /^0x[0-9a-fA-F]{40}$/);
    const remembered = JSON.parse(await readFile(join(dataDir, 'settlement', 'chain-31337.json'), 'utf8')) as { vault: string };
    assert.equal(remembered.vault, info.data.vault_address);
    // The marketplace deployed its service registry on the same chain (development).
    const [, marketplaceUrl] = (stdout.find((line) => line.startsWith('marketplace ')) ?? '').split(/\s{2,}/);
    const registry = (await (await fetch(`${marketplaceUrl}/v1/registry`)).json()) as { data: { enabled: boolean } };
    assert.equal(registry.data.enabled, true);
    // The daemon keeps files, not a database, and is wired to the services started before it.
    const [, daemonUrl, daemonData] = (stdout.find((line) => line.startsWith('daemon ')) ?? '').split(/\s{2,}/);
    assert.equal(daemonData, `files in ${join(dataDir, 'daemon')}`);
    // Secure by default: the daemon answers only its bearer, derived from the root secret `up` generated.
    assert.equal((await fetch(`${daemonUrl}/me`)).status, 401);
    // The lines printed to paste: through the router, with the development user's token (dev-identity-up.test.ts uses them).
    const [, routerUrl] = (stdout.find((line) => line.startsWith('router ')) ?? '').split(/\s{2,}/);
    assert.ok(
      stdout.some((line) => line.includes(`DAEMON_URL=${routerUrl} PLATFORM_DAEMON_TOKEN=$(DATA_DIR=${dataDir} npx platform token)`)),
      stdout.join('\n'),
    );
    assert.ok(!stdout.some((line) => /^\s+router\s+no identity provider/.test(line)), 'the development identity provider configures the router');
    assert.ok(
      stdout.some((line) => /^\s+gateway\s+no model provider: set GATEWAY_UPSTREAM_URL/.test(line)),
      'the table says the gateway has no provider',
    );
    const secret = await runToExit(['secret', 'PLATFORM_DAEMON_TOKEN'], cleanEnv({ DATA_DIR: dataDir }));
    assert.equal(secret.code, 0, secret.stderr);
    const bearer = { authorization: `Bearer ${secret.stdout.trim()}` };
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

    child.kill('SIGTERM');
    const [code, signal] = await within(exited, limitMs, 'platform up to exit after SIGTERM');
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, stderr);
  } finally {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('platform up: a service that cannot start stops the platform (exit 1, named), and nothing that waits for it starts', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-up-fail-'));
  // Settlement's port is taken, so settlement fails after the contract engine it waits for has started.
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const port = (taken.address() as AddressInfo).port;
  try {
    const env = cleanEnv({ DATA_DIR: dataDir, PORT: '0', SETTLEMENT_PORT: String(port), SCHEDULER_DISPATCHER: 'false' });
    const { code, stdout, stderr } = await runToExit(['up'], env, upLimitMs);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /platform up: settlement failed to start: .*EADDRINUSE|address already in use/);
    assert.doesNotMatch(stdout, /^name/m, 'no table: the platform did not come up');
    // What waits for settlement never started (no folder); what started beside it was stopped (the process exited).
    for (const name of ['marketplace', 'daemon', 'router']) assert.equal(existsSync(join(dataDir, name)), false, name);
    assert.equal(existsSync(join(dataDir, 'contracts')), true);
  } finally {
    taken.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('platform serve with an unknown service exits 2 and names the known ones', async () => {
  const { code, stderr } = await runToExit(['serve', 'nope'], cleanEnv({}));
  assert.equal(code, 2);
  assert.match(stderr, /scheduler/);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
});

test('platform serve scheduler with a bad PORT exits 1 with one line naming PORT', async () => {
  const { code, stderr } = await runToExit(['serve', 'scheduler'], cleanEnv({ PORT: 'abc' }));
  assert.equal(code, 1);
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0] ?? '', /PORT/);
});

test('an unknown command prints usage and exits 2', async () => {
  const { code, stderr } = await runToExit(['bogus'], cleanEnv({}));
  assert.equal(code, 2);
  assert.match(stderr, /Usage: platform/);
});

test('under platform up the daemon is given the addresses of the services started before it, unless set', async () => {
  const { serviceEnv } = await import('../src/up.ts');
  const started = [
    { name: 'gateway', url: 'http://127.0.0.1:9090' },
    { name: 'memory', url: 'http://127.0.0.1:4242' },
  ];
  const env = serviceEnv({ PLATFORM_MEMORY_URL: 'http://memory.internal:4242' }, 'daemon', started);
  assert.deepEqual(
    [env.PLATFORM_GATEWAY_URL, env.PLATFORM_MEMORY_URL, env.PLATFORM_SCHEDULER_URL],
    ['http://127.0.0.1:9090/v1', 'http://memory.internal:4242', undefined],
  );
  assert.equal(serviceEnv({}, 'scheduler', started).PLATFORM_GATEWAY_URL, undefined, 'only the daemon is wired');
});

test('under platform up settlement keeps its vault on the contract engine’s local chain, in development, unless told otherwise', async () => {
  const { serviceEnv } = await import('../src/up.ts');
  const started = [{ name: 'contracts', url: 'http://127.0.0.1:9095', links: { localRpcUrl: 'http://127.0.0.1:8545' } }];
  const env = serviceEnv({}, 'settlement', started);
  assert.deepEqual([env.SETTLEMENT_RPC_URL, env.SETTLEMENT_DEV], ['http://127.0.0.1:8545', 'true']);
  assert.equal(serviceEnv({ NODE_ENV: 'production' }, 'settlement', started).SETTLEMENT_DEV, undefined, 'never development in production');
  assert.equal(serviceEnv({ SETTLEMENT_RPC_URL: 'http://node.internal:8545' }, 'settlement', started).SETTLEMENT_RPC_URL, 'http://node.internal:8545');
  assert.equal(serviceEnv({}, 'settlement', [{ name: 'contracts', url: 'http://127.0.0.1:9095' }]).SETTLEMENT_RPC_URL, undefined, 'no chain, no wiring');
});

test('under platform up the marketplace pays through the settlement and registers on the chain started before it', async () => {
  const { serviceEnv } = await import('../src/up.ts');
  const started = [
    { name: 'contracts', url: 'http://127.0.0.1:9095', links: { localRpcUrl: 'http://127.0.0.1:8545' } },
    { name: 'settlement', url: 'http://127.0.0.1:9097' },
  ];
  const env = serviceEnv({ LEDGER_TOKEN: 'fleet' }, 'marketplace', started);
  assert.deepEqual(
    [env.MARKETPLACE_SETTLEMENT_URL, env.MARKETPLACE_RPC_URL, env.MARKETPLACE_LEDGER_TOKEN, env.MARKETPLACE_DEV],
    ['http://127.0.0.1:9097', 'http://127.0.0.1:8545', 'fleet', 'true'],
  );
  assert.equal(serviceEnv({ NODE_ENV: 'production' }, 'marketplace', started).MARKETPLACE_DEV, undefined);
  assert.equal(
    serviceEnv({ MARKETPLACE_SETTLEMENT_URL: 'https://ledger.example' }, 'marketplace', started).MARKETPLACE_SETTLEMENT_URL,
    'https://ledger.example',
  );
});

test('under platform up each service gets its own port and folder from <SERVICE>_PORT, <SERVICE>_DATA_DIR and DATA_DIR', async () => {
  const { serviceEnv } = await import('../src/up.ts');
  const env = { PORT: '8000', DATA_DIR: '/srv/platform', SETTLEMENT_PORT: '9197', SCHEDULER_DATA_DIR: '/var/alarms', LOG_LEVEL: 'warn' };
  assert.deepEqual(
    [serviceEnv(env, 'settlement').PORT, serviceEnv(env, 'settlement').DATA_DIR, serviceEnv(env, 'settlement').LOG_LEVEL],
    ['9197', join('/srv/platform', 'settlement'), 'warn'],
  );
  assert.deepEqual(
    [serviceEnv(env, 'scheduler').PORT, serviceEnv(env, 'scheduler').DATA_DIR],
    [undefined, '/var/alarms'],
    'a shared PORT would collide, so it is dropped',
  );
  assert.equal(serviceEnv({ PORT: '0' }, 'scheduler').PORT, '0', 'PORT=0 is a free port for everyone');
  assert.equal(serviceEnv({}, 'scheduler').DATA_DIR, undefined);
});

test('platform mcp takes exactly one service, contracts; anything else is a usage error (exit 2)', async () => {
  for (const args of [['mcp'], ['mcp', 'nope'], ['mcp', 'contracts', 'extra']]) {
    const { code, stderr } = await runToExit(args, cleanEnv({}));
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, /mcp takes one service: contracts/);
  }
});
