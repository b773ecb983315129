import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { runPlatform } from '@platform/testkit/run-command';

const quiet = { LOG_LEVEL: 'warn' };

test('platform up: a service that cannot start stops the platform (exit 1, named), and nothing that waits for it starts', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-up-fail-'));
  // Settlement's port is taken, so settlement fails after the contract engine it waits for has started.
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const port = (taken.address() as AddressInfo).port;
  try {
    const env = {
      ...quiet,
      DATA_DIR: dataDir,
      PORT: '0',
      SETTLEMENT_PORT: String(port),
      SCHEDULER_DISPATCHER: 'false',
      CONTRACTS_LOCAL_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    };
    const { code, stdout, stderr } = await runPlatform(['up'], { env });
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

test('platform up whose local chain does not come up stops, naming the contract engine and why (it printed the ready table without a chain)', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-up-chain-'));
  // Says "Listening" as anvil does, then exits before answering anything.
  const anvil = join(dataDir, 'anvil-exits.cjs');
  await writeFile(anvil, `#!${process.execPath}\nconsole.log('Listening on 127.0.0.1:1');\nprocess.exit(3);\n`, { mode: 0o755 });
  try {
    const chainUrl = `http://127.0.0.1:${await freePort()}`;
    const env = { ...quiet, DATA_DIR: dataDir, PORT: '0', SCHEDULER_DISPATCHER: 'false', CONTRACTS_LOCAL_RPC_URL: chainUrl, CONTRACTS_ANVIL_PATH: anvil };
    const { code, stdout, stderr } = await runPlatform(['up'], { env });
    assert.equal(code, 1, stderr);
    assert.ok(
      stderr.includes(`platform up: contracts failed to start: the local chain did not come up: anvil exited with code 3 before it answered at ${chainUrl}\n`),
      stderr,
    );
    assert.doesNotMatch(stdout, /^name/m, 'no ready table for a platform without its chain');
    for (const name of ['settlement', 'marketplace', 'router']) assert.equal(existsSync(join(dataDir, name)), false, `${name} never started`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('up prints ready only when every row answers /healthz: the first that does not is named', async () => {
  const { firstUnhealthy } = await import('../src/up.ts');
  const sick = createHttpServer((_request, response) => response.writeHead(503).end('{"ok":false}'));
  sick.listen(0, '127.0.0.1');
  await once(sick, 'listening');
  const healthy = createHttpServer((_request, response) => response.writeHead(200).end('{"ok":true}'));
  healthy.listen(0, '127.0.0.1');
  await once(healthy, 'listening');
  const url = (server: typeof sick) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.equal(await firstUnhealthy([{ name: 'scheduler', url: url(healthy) }]), undefined);
    const failed = await firstUnhealthy([
      { name: 'scheduler', url: url(healthy) },
      { name: 'memory', url: url(sick) },
      { name: 'gone', url: `http://127.0.0.1:${await freePort()}` },
    ]);
    assert.equal(failed?.name, 'memory');
    assert.equal(failed?.error.message, `${url(sick)}/healthz answered 503: {"ok":false}`);
  } finally {
    sick.close();
    healthy.close();
  }
});

test('platform serve with an unknown service exits 2 and names the known ones', async () => {
  const { code, stderr } = await runPlatform(['serve', 'nope'], { env: quiet });
  assert.equal(code, 2);
  assert.match(stderr, /scheduler/);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
});

test('platform serve scheduler with a bad PORT exits 1 with one line naming PORT', async () => {
  const { code, stderr } = await runPlatform(['serve', 'scheduler'], { env: { ...quiet, PORT: 'abc' } });
  assert.equal(code, 1);
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0] ?? '', /PORT/);
});

test('an unknown command prints usage and exits 2', async () => {
  const { code, stderr } = await runPlatform(['bogus'], { env: quiet });
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
    const { code, stderr } = await runPlatform(args, { env: quiet });
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, /mcp takes one service: contracts/);
  }
});

test('under platform up the scheduler wakes through the router’s internal wake route, with default ports and under PORT=0', async () => {
  const { serviceEnv, withPlannedAddresses } = await import('../src/up.ts');
  assert.equal(serviceEnv({}, 'scheduler').SCHEDULER_WAKE_URL, 'http://127.0.0.1:8081/internal/wake', 'the router’s default internal port');
  assert.equal(serviceEnv({}, 'scheduler').SCHEDULER_WAKE_CHECK, 'true', 'the router knows the check made when an alarm is created');
  assert.equal(serviceEnv({ SCHEDULER_WAKE_URL: 'https://wake.internal/w' }, 'scheduler').SCHEDULER_WAKE_CHECK, undefined, 'a receiver of your own may not');
  assert.equal((await withPlannedAddresses({})).ROUTER_INTERNAL_ADDR, undefined, 'default ports: nothing to pick');

  // PORT=0: `up` picks the internal port before anything starts, and tells both the router and the scheduler.
  const env = await withPlannedAddresses({ PORT: '0' });
  assert.match(env.ROUTER_INTERNAL_ADDR ?? '', /^127\.0\.0\.1:[1-9]\d*$/);
  assert.equal(serviceEnv(env, 'router').ROUTER_INTERNAL_ADDR, env.ROUTER_INTERNAL_ADDR);
  assert.equal(serviceEnv(env, 'scheduler').SCHEDULER_WAKE_URL, `http://${env.ROUTER_INTERNAL_ADDR}/internal/wake`);

  // Settings win; a wildcard listen address is reached on loopback.
  const wildcard = await withPlannedAddresses({ PORT: '0', ROUTER_INTERNAL_ADDR: '0.0.0.0:9181' });
  assert.equal(wildcard.ROUTER_INTERNAL_ADDR, '0.0.0.0:9181');
  assert.equal(serviceEnv(wildcard, 'scheduler').SCHEDULER_WAKE_URL, 'http://127.0.0.1:9181/internal/wake');
  assert.equal(serviceEnv({ ROUTER_INTERNAL_ADDR: '[::]:9181' }, 'scheduler').SCHEDULER_WAKE_URL, 'http://[::1]:9181/internal/wake');
  assert.equal(serviceEnv({ ...env, SCHEDULER_WAKE_URL: 'https://wake.internal/w' }, 'scheduler').SCHEDULER_WAKE_URL, 'https://wake.internal/w');
});

test('under platform up the daemons get the marketplace’s URL without waiting for it to start: default port, or the one up picks under PORT=0', async () => {
  const { serviceEnv, withPlannedAddresses } = await import('../src/up.ts');
  assert.equal(serviceEnv({}, 'daemon').PLATFORM_MARKETPLACE_URL, 'http://127.0.0.1:9098');
  assert.equal((await withPlannedAddresses({})).MARKETPLACE_PORT, undefined, 'default ports: nothing to pick');
  const env = await withPlannedAddresses({ PORT: '0' });
  assert.match(env.MARKETPLACE_PORT ?? '', /^[1-9]\d*$/);
  assert.equal(serviceEnv(env, 'marketplace').PORT, env.MARKETPLACE_PORT, 'the marketplace listens there');
  for (const name of ['daemon', 'router']) assert.equal(serviceEnv(env, name).PLATFORM_MARKETPLACE_URL, `http://127.0.0.1:${env.MARKETPLACE_PORT}`, name);
  assert.equal(serviceEnv({ HOST: '0.0.0.0', MARKETPLACE_PORT: '9198' }, 'router').PLATFORM_MARKETPLACE_URL, 'http://127.0.0.1:9198');
  assert.equal(serviceEnv({ PLATFORM_MARKETPLACE_URL: 'https://market.example' }, 'daemon').PLATFORM_MARKETPLACE_URL, 'https://market.example');
  assert.equal(serviceEnv(env, 'scheduler').PLATFORM_MARKETPLACE_URL, undefined, 'only the daemons are wired');
});
