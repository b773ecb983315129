import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { hkdfSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { daemonTokenFor } from '@platform/kit/auth/daemon-token';
import { daemonOwnerTokens, memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { platformBin, runPlatform } from '@platform/testkit/run-command';
import { daemonUserSecrets, derivedSettings, derivedValue, rootSecret, secretsFor } from '../src/platform-secrets.ts';

describe('platform up: secrets derived from one root', () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-secrets-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const root = Buffer.alloc(32, 7);

  test('the root is generated once into DATA_DIR/platform.secret, owner-only, and read back on the next start', () => {
    const first = rootSecret({ DATA_DIR: dir });
    assert.equal(first.key.length, 32);
    assert.match(first.source, /platform\.secret \(generated\)$/);
    assert.equal(statSync(join(dir, 'platform.secret')).mode & 0o777, 0o600);
    const again = rootSecret({ DATA_DIR: dir });
    assert.deepEqual(again.key, first.key);
    assert.equal(again.source, join(dir, 'platform.secret'));
  });

  test('PLATFORM_SECRET wins over the file and must be at least 32 characters', () => {
    assert.throws(() => rootSecret({ DATA_DIR: dir, PLATFORM_SECRET: 'x'.repeat(31) }), /at least 32 characters/);
    const given = rootSecret({ DATA_DIR: dir, PLATFORM_SECRET: 'x'.repeat(32) });
    assert.deepEqual([given.key.toString('utf8'), given.source], ['x'.repeat(32), 'PLATFORM_SECRET']);
  });

  test('each value is HKDF-SHA256 of the root under its own label: callers share the transport token, nothing else repeats', () => {
    const expected = Buffer.from(hkdfSync('sha256', root, 'platform up', 'platform/settlement/transport', 32)).toString('base64url');
    assert.equal(derivedValue('LEDGER_TOKEN', root), expected);
    assert.equal(derivedValue('MARKETPLACE_LEDGER_TOKEN', root), expected, 'the marketplace presents the ledger token settlement expects');
    assert.equal(derivedValue('SCHEDULER_WAKE_TOKEN', root), derivedValue('ROUTER_WAKE_TOKEN', root), 'the scheduler wakes the router with its token');
    const byLabel = new Map(derivedSettings.map((entry) => [entry.label, derivedValue(entry.setting, root)]));
    assert.equal(new Set(byLabel.values()).size, byLabel.size, 'distinct labels, distinct values');
    assert.notEqual(derivedValue('LEDGER_TOKEN', Buffer.alloc(32, 8)), expected, 'another root, other values');
    assert.equal(derivedValue('NOT_A_SETTING', root), undefined);
  });

  test('a service receives exactly the secrets it uses, and a setting in the environment is never replaced', () => {
    // The metrics bearer goes to every service: one Prometheus credential scrapes them all.
    assert.deepEqual(Object.keys(secretsFor('gateway', root, {}, join(dir, 'gateway'))).sort(), ['PLATFORM_GATEWAY_TOKEN', 'PLATFORM_METRICS_TOKEN']);
    assert.deepEqual(Object.keys(secretsFor('scheduler', root, {}, join(dir, 'scheduler'))).sort(), [
      'PLATFORM_METRICS_TOKEN',
      'SCHEDULER_AGENT_AUTH_SECRET',
      'SCHEDULER_TOKEN',
      'SCHEDULER_WAKE_TOKEN',
    ]);
    const daemon = secretsFor('daemon', root, { LEDGER_TOKEN: 'operator-set' }, join(dir, 'daemon'));
    assert.equal(daemon.LEDGER_TOKEN, undefined, 'the environment keeps its value');
    assert.equal(secretsFor('daemon', root, {}, join(dir, 'daemon')).LEDGER_TOKEN, derivedValue('LEDGER_TOKEN', root));
    assert.equal(daemon.SETTLEMENT_AGENT_AUTH_SECRET, undefined, 'a principal-token secret stays with its service');
  });

  test("the memory server's root token goes to the memory server and the router, never to a daemon", () => {
    const memoryRoot = derivedValue('MEMORY_MCP_TOKEN', root);
    assert.equal(secretsFor('memory', root, {}, join(dir, 'memory')).MEMORY_MCP_TOKEN, memoryRoot);
    assert.equal(secretsFor('router', root, {}, join(dir, 'router')).MEMORY_MCP_TOKEN, memoryRoot, 'the router mints each daemon’s from it');
    assert.equal(secretsFor('daemon', root, {}, join(dir, 'daemon')).MEMORY_MCP_TOKEN, undefined);
  });

  test('the daemon `up` runs gets its own user’s memory token, for the user in its folder, in place of any root', () => {
    const folder = join(dir, 'daemon-user');
    const first = daemonUserSecrets(root, {}, folder);
    const userId = readFileSync(join(folder, 'user-id'), 'utf8').trim();
    assert.match(userId, /^[0-9a-f-]{36}$/, 'a user id generated once into the folder, as the daemon would');
    assert.equal(first.DAEMON_USER_ID, userId);
    assert.deepEqual(daemonUserSecrets(root, {}, folder), first, 'the same user and token on the next start');
    const derivedRoot = derivedValue('MEMORY_MCP_TOKEN', root) as string;
    assert.deepEqual(new OwnerTokens(derivedRoot, memoryOwnerTokens).verify(first.MEMORY_MCP_TOKEN as string), { ok: true, owner: userId });
    assert.notEqual(first.MEMORY_MCP_TOKEN, derivedRoot);

    // Under `up` a MEMORY_MCP_TOKEN in the environment is the memory server's root: the daemon gets a token minted from it.
    const operator = daemonUserSecrets(root, { MEMORY_MCP_TOKEN: 'operator-memory-root', DAEMON_USER_ID: 'user.two' }, folder);
    assert.equal(operator.DAEMON_USER_ID, 'user.two', 'DAEMON_USER_ID wins over the folder');
    assert.deepEqual(new OwnerTokens('operator-memory-root', memoryOwnerTokens).verify(operator.MEMORY_MCP_TOKEN as string), {
      ok: true,
      owner: 'user.two',
    });
    assert.notEqual(operator.MEMORY_MCP_TOKEN, 'operator-memory-root');
    assert.notEqual(operator.MEMORY_MCP_TOKEN, first.MEMORY_MCP_TOKEN);
  });

  // Each setting a daemon holds an owner token for, and the service whose root it is.
  const ownerScoped: Record<string, string> = {
    MEMORY_MCP_TOKEN: 'memory',
    PLATFORM_CONTRACT_TOKEN: 'contracts',
    PLATFORM_CONNECTOR_TOKEN: 'connector',
    PLATFORM_GATEWAY_TOKEN: 'gateway',
    SCHEDULER_TOKEN: 'scheduler',
  };

  test('every owner-scoped root goes to its service and the router only; the daemon `up` runs gets its user’s token of each', () => {
    assert.deepEqual(daemonOwnerTokens.map(({ setting }) => setting).sort(), Object.keys(ownerScoped).sort(), 'every scheme is covered here');
    const folder = join(dir, 'daemon-owner-tokens');
    const env = { DAEMON_USER_ID: 'user-a' };
    const daemon = { ...secretsFor('daemon', root, env, folder), ...daemonUserSecrets(root, env, folder) };
    const other = daemonUserSecrets(root, { DAEMON_USER_ID: 'user-b' }, folder);
    for (const { setting, scheme } of daemonOwnerTokens) {
      const serviceRoot = derivedValue(setting, root) as string;
      const service = ownerScoped[setting] as string;
      assert.equal(secretsFor(service, root, {}, join(dir, service))[setting], serviceRoot, `${service} gets its root`);
      assert.equal(secretsFor('router', root, {}, join(dir, 'router'))[setting], serviceRoot, `the router mints from ${setting}`);
      assert.deepEqual(new OwnerTokens(serviceRoot, scheme).verify(daemon[setting] ?? ''), { ok: true, owner: 'user-a' }, setting);
      assert.notEqual(other[setting], daemon[setting], `two users, two ${setting}`);
      for (const value of Object.values(daemon)) assert.notEqual(value, serviceRoot, `no root ${setting} in the daemon's settings`);
      const operator = daemonUserSecrets(root, { ...env, [setting]: 'operator-root' }, folder);
      assert.deepEqual(new OwnerTokens('operator-root', scheme).verify(operator[setting] ?? ''), { ok: true, owner: 'user-a' }, 'minted from the set root');
    }
  });

  test('the root of every daemon’s bearer goes to the router only; the daemon `up` runs gets its own user’s bearer, derived as the router derives it', () => {
    const daemonRoot = derivedValue('PLATFORM_DAEMON_TOKEN', root) as string;
    assert.equal(secretsFor('router', root, {}, join(dir, 'router')).PLATFORM_DAEMON_TOKEN, daemonRoot);
    const folder = join(dir, 'daemon-bearer');
    assert.equal(secretsFor('daemon', root, {}, folder).PLATFORM_DAEMON_TOKEN, undefined);
    const own = daemonUserSecrets(root, { DAEMON_USER_ID: 'user-a' }, folder);
    assert.equal(own.PLATFORM_DAEMON_TOKEN, daemonTokenFor(daemonRoot)('user-a'), 'the bearer the router would give user-a’s daemon');
    assert.notEqual(own.PLATFORM_DAEMON_TOKEN, daemonRoot);
    assert.notEqual(
      daemonUserSecrets(root, { DAEMON_USER_ID: 'user-b' }, folder).PLATFORM_DAEMON_TOKEN,
      own.PLATFORM_DAEMON_TOKEN,
      'one user’s bearer opens no other daemon',
    );
    const operator = daemonUserSecrets(root, { DAEMON_USER_ID: 'user-a', PLATFORM_DAEMON_TOKEN: 'operator-daemon-root' }, folder);
    assert.equal(operator.PLATFORM_DAEMON_TOKEN, daemonTokenFor('operator-daemon-root')('user-a'), 'a root in the environment is the router’s: minted from');
  });

  test('platform secret PLATFORM_DAEMON_TOKEN prints the bearer of the daemon `up` runs, never the root; with no daemon user yet it creates none', async () => {
    const dataDir = join(dir, 'secret-command');
    const rootKey = rootSecret({ DATA_DIR: dataDir }).key;
    const none = await runPlatform(['secret', 'PLATFORM_DAEMON_TOKEN'], { env: { DATA_DIR: dataDir } });
    assert.deepEqual([none.code, none.stdout], [1, '']);
    assert.match(none.stderr, /the daemon has no user yet/);
    assert.equal(existsSync(join(dataDir, 'daemon', 'user-id')), false);
    const { DAEMON_USER_ID: userId, PLATFORM_DAEMON_TOKEN: bearer } = daemonUserSecrets(rootKey, {}, join(dataDir, 'daemon'));
    const printed = await runPlatform(['secret', 'PLATFORM_DAEMON_TOKEN'], { env: { DATA_DIR: dataDir } });
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, `${bearer}\n`);
    assert.equal(bearer, daemonTokenFor(derivedValue('PLATFORM_DAEMON_TOKEN', rootKey) as string)(userId as string));
    assert.ok(!printed.stdout.includes(derivedValue('PLATFORM_DAEMON_TOKEN', rootKey) as string), 'not the root');
  });

  test('deploy/make-env.sh writes each deployed service exactly the derived settings `up` gives it, owner-only', async () => {
    const out = join(dir, 'deploy-env');
    const secret = 'r'.repeat(32);
    const script = join(import.meta.dirname, '..', '..', 'deploy', 'make-env.sh');
    const env = { PLATFORM_SECRET: secret, OUT_DIR: out, PLATFORM_COMMAND: `${process.execPath} ${platformBin}` };
    const run = spawnSync('sh', [script], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const key = rootSecret({ PLATFORM_SECRET: secret }).key;
    // Every service that receives a derived setting, but the daemons (the router hands them theirs) and development's identity provider.
    const deployed = [...new Set(derivedSettings.flatMap((entry) => entry.services))].filter((service) => !['daemon', 'identity'].includes(service));
    assert.deepEqual(readdirSync(out).sort(), deployed.map((service) => `${service}.env`).sort());
    for (const service of deployed) {
      const file = join(out, `${service}.env`);
      assert.equal(statSync(file).mode & 0o777, 0o600, file);
      const expected = derivedSettings.filter((entry) => entry.services.includes(service)).map(({ setting }) => `${setting}=${derivedValue(setting, key)}`);
      assert.deepEqual(readFileSync(file, 'utf8').trim().split('\n'), expected, service);
    }
  });

  test("the contract engine's wallet key is derived for a new folder, and an older folder keeps its own key file", () => {
    const fresh = secretsFor('contracts', root, {}, join(dir, 'contracts-new'));
    assert.match(fresh.CONTRACTS_WALLET_KEY ?? '', /^[0-9a-f]{64}$/);
    const older = join(dir, 'contracts-old');
    mkdirSync(older, { recursive: true });
    writeFileSync(join(older, 'wallet.key'), `${'ab'.repeat(32)}\n`);
    assert.equal(secretsFor('contracts', root, {}, older).CONTRACTS_WALLET_KEY, undefined);
  });
});
