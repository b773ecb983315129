import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { SchedulerClient } from '@platform/client/scheduler-client';
import { SettlementClient } from '@platform/client/settlement-client';
import { pollUntil } from '@platform/testkit/eventually';
import { alive, type RunningPlatform, startPlatform } from '@platform/testkit/platform-up';
import { runPlatform } from '@platform/testkit/run-command';

/*
 * `platform up --instances`: several instances of the scheduler and of settlement, each a process of its own, on one
 * PostgreSQL database, with the guarantees their READMEs give checked from outside: every alarm fires exactly once and
 * the scheduler instances share the work; settlement's standby takes over when the sequencer dies, and no pay it
 * acknowledged is lost.
 */

const databaseUrl = process.env.TEST_DATABASE_URL;
const skip = databaseUrl ? false : 'needs TEST_DATABASE_URL: several instances share one PostgreSQL database';

test('--instances on embedded PGlite is refused with one line naming DATABASE_URL; an unknown or unscalable service is a usage error', async () => {
  const refused = await runPlatform(['up', '--instances', 'scheduler=3'], { env: { LOG_LEVEL: 'silent' } });
  assert.equal(refused.code, 1);
  assert.equal(
    refused.stderr.trim(),
    'platform up: --instances scheduler needs DATABASE_URL (one PostgreSQL the instances share): embedded PGlite is opened by one process only',
  );
  for (const [spec, reason] of [
    ['gateway=2', /gateway runs as one instance; only scheduler and settlement scale out/],
    ['scheduler=0', /between 1 and 16/],
    ['scheduler', /takes <service>=<count>/],
  ] as const) {
    const run = await runPlatform(['up', '--instances', spec], { env: { LOG_LEVEL: 'silent' } });
    assert.equal(run.code, 2, spec);
    assert.match(run.stderr, reason);
  }
});

/** The table's rows of one service's instances: `settlement-1`, `settlement-2`, … with each one's pid (`settlement` is their front). */
function instances(platform: RunningPlatform, name: string): { name: string; url: string; pid: number }[] {
  return [...platform.services.values()]
    .filter((service) => service.name.startsWith(`${name}-`))
    .map((service) => ({ name: service.name, url: service.url, pid: Number(/pid (\d+)/.exec(service.data)?.[1]) }));
}

/**
 * A wake receiver that holds each wake until `hold` are open at once, then answers them all (and every later one at
 * once). Each scheduler instance runs with one wake in flight, so `hold` wakes open together means `hold` instances
 * were firing at the same time.
 */
async function startHoldingReceiver(hold: number) {
  const keys: string[] = [];
  let waiting: ServerResponse[] = [];
  let released = false;
  const server = createServer((request, response) => {
    keys.push(String(request.headers['idempotency-key']));
    request.resume();
    request.on('end', () => {
      if (released) return void response.writeHead(200).end('{"ok":true}');
      waiting.push(response);
      if (waiting.length < hold) return;
      released = true;
      for (const held of waiting) held.writeHead(200).end('{"ok":true}');
      waiting = [];
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  // Never what keeps the test's process alive: after a failure, a receiver left listening hung the file (and CI).
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/wake`,
    keys,
    released: () => released,
    /** Ends the wakes still held (their senders may be gone) so that close does not wait for them. */
    closeAll: () => {
      for (const held of waiting) held.destroy();
      server.closeAllConnections();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('three schedulers and two settlements on one PostgreSQL', { skip }, async () => {
  const receiver = await startHoldingReceiver(3);
  const platform = await startPlatform({
    args: ['--instances', 'scheduler=3,settlement=2'],
    postgresAdminUrl: databaseUrl as string,
    env: { SCHEDULER_WAKE_URL: receiver.url, SCHEDULER_DISPATCH_CONCURRENCY: '1', SETTLEMENT_TAKEOVER_POLL_MS: '200' },
  });
  try {
    const schedulers = instances(platform, 'scheduler');
    const settlements = instances(platform, 'settlement');
    assert.deepEqual([schedulers.length, settlements.length, [...schedulers, ...settlements].every((entry) => alive(entry.pid))], [3, 2, true]);

    // Scheduler: 12 alarms due at once, created through different instances; each fires exactly once.
    const key = generateAgentKey();
    const token = await platform.secret('SCHEDULER_TOKEN');
    const clients = schedulers.map((entry) => new SchedulerClient({ baseUrl: entry.url, transportToken: token, key }));
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        (clients[index % 3] as SchedulerClient).createAlarm({ kind: 'once', wake_message: `alarm ${index}`, delay_seconds: 0 }),
      ),
    );
    await pollUntil(
      () => receiver.keys.length >= 12,
      () => `wakes received: ${receiver.keys.length} of 12`,
      { timeoutMs: 60_000 },
    );
    assert.equal(receiver.released(), true, 'three wakes were in flight at once: all three instances fired');
    // A wake reaches the receiver before its instance reads the answer and records the alarm fired, so the last
    // alarms may still read `active` for a moment after the twelfth wake arrives.
    let statuses: string[] = [];
    await pollUntil(
      async () => {
        statuses = (await Promise.all(created.map((alarm) => (clients[0] as SchedulerClient).getAlarm(alarm.id)))).map((alarm) => alarm.status);
        return statuses.every((status) => status !== 'active');
      },
      () => `alarms still active after their wakes: ${statuses.join(', ')}`,
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(
      statuses,
      created.map(() => 'fired'),
    );
    assert.equal(new Set(receiver.keys).size, receiver.keys.length, `no alarm fired twice: ${receiver.keys.join(', ')}`);

    // Settlement: the sequencer is the first instance; pays it acknowledged survive its death, the standby takes over.
    const ledgerToken = await platform.secret('LEDGER_TOKEN');
    const [sequencer, standby] = settlements as [(typeof settlements)[0], (typeof settlements)[0]];
    const role = async (url: string) => ((await (await fetch(`${url}/v1/info`)).json()) as { data: { role: string } }).data.role;
    assert.deepEqual([await role(sequencer.url), await role(standby.url)], ['sequencer', 'standby']);
    const payer = generateAgentKey();
    const payee = generateAgentKey();
    const onSequencer = new SettlementClient({ baseUrl: sequencer.url, transportToken: ledgerToken, key: payer });
    await onSequencer.faucet('10');
    const acknowledged = [];
    for (let index = 0; index < 5; index++) acknowledged.push((await onSequencer.pay({ to: payee.did, amount: '1' })).seq);
    process.kill(sequencer.pid, 'SIGKILL');
    await pollUntil(async () => (await role(standby.url).catch(() => 'down')) === 'sequencer', 'the standby takes over', { timeoutMs: 60_000 });
    // Every service `up` wired to settlement calls the table's `settlement`, the front of its instances, which moves
    // on from the dead one: a pay there lands on the new sequencer, and the daemon and the router read through it.
    assert.equal(platform.services.get('settlement')?.data, 'forwards to settlement-1, settlement-2');
    const onFront = new SettlementClient({ baseUrl: platform.url('settlement'), transportToken: ledgerToken, key: payer });
    acknowledged.push((await onFront.pay({ to: payee.did, amount: '1' })).seq);
    assert.equal((await onFront.balance()).balance, '4.000000');
    const daemonAccount = await fetch(`${platform.url('daemon')}/account`, {
      headers: { authorization: `Bearer ${await platform.secret('PLATFORM_DAEMON_TOKEN')}` },
    });
    assert.equal(daemonAccount.status, 200, await daemonAccount.text());
    const routed = await fetch(`${platform.url('router')}/ledger/v1/info`, { headers: { authorization: `Bearer ${await platform.token()}` } });
    assert.equal(((await routed.json()) as { data: { role: string } }).data.role, 'sequencer', 'the router’s ledger passthrough reaches the new sequencer');
    for (const seq of acknowledged) assert.equal((await fetch(`${standby.url}/v1/receipt/${seq}`)).status, 200, `receipt ${seq}`);
    // The new sequencer's chain loop checks the reserve against the ledger on its own tick: until its first check
    // since the takeover, `fully_reserved` is false for want of a check, not for a shortfall (which raises `alarm`).
    let supply: { fully_reserved: boolean; supply: string; alarm: string | null } | undefined;
    await pollUntil(
      async () => {
        supply = ((await (await fetch(`${standby.url}/v1/supply`)).json()) as { data: NonNullable<typeof supply> }).data;
        return supply.fully_reserved || supply.alarm !== null;
      },
      () => `the new sequencer's first reserve check: ${JSON.stringify(supply)}`,
      { timeoutMs: 60_000 },
    );
    assert.deepEqual([supply?.fully_reserved, supply?.supply, supply?.alarm], [true, '10.000000', null], 'the reserve still backs the supply');
  } finally {
    try {
      await platform.kill();
    } finally {
      receiver.closeAll();
      await receiver.close();
    }
  }
});
