import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { json, oneLine, platform, startInProcess, tempFolder } from './agent-cli-harness.ts';

const token = 'agent-cli-scheduler-token';

describe('platform alarm against a scheduler', () => {
  let scheduler: StartedService;
  let home: ReturnType<typeof tempFolder>;
  let env: Record<string, string>;
  const alarm = (args: string[], extra: Record<string, string> = {}) => platform(['alarm', ...args], home.path, { ...env, ...extra });

  before(async () => {
    home = tempFolder('agent-cli-home-');
    // The dispatcher stays off: these alarms are only created, listed and cancelled, never fired.
    scheduler = await startInProcess(() => import('../../services/scheduler/src/main.ts'), { SCHEDULER_TOKEN: token, SCHEDULER_DISPATCHER: 'false' });
    env = { PLATFORM_SCHEDULER_URL: scheduler.url, SCHEDULER_TOKEN: token, PLATFORM_AGENT_FILE: join(home.path, 'agent.json') };
    assert.equal((await platform(['agent', 'new', '--user-id', 'alarm-tester'], home.path, env)).code, 0);
  });
  after(async () => {
    await scheduler?.stop();
    home?.remove();
  });

  test('create once and cron, list them newest first, cancel one: tables by default, the service data with --json', async () => {
    const once = await alarm(['create', 'check', 'the', 'oven', '--in', '10m', '--label', 'oven', '--payload', '{"room":"kitchen"}']);
    assert.equal(once.code, 0, once.stderr);
    const [header, row] = once.stdout.trim().split('\n');
    assert.match(header as string, /^id +status +next fire$/);
    assert.match(row as string, /^[0-9a-f-]{36} +active +\d{4}-\d\d-\d\dT/);
    const cron = json(await alarm(['create', 'weekly report', '--cron', '0 9 * * 1', '--timezone', 'Europe/Paris', '--idempotency-key', 'weekly', '--json']));
    assert.deepEqual(Object.keys(cron).sort(), ['id', 'next_fire_at', 'status']);
    const replay = json(await alarm(['create', 'weekly report', '--cron', '0 9 * * 1', '--timezone', 'Europe/Paris', '--idempotency-key', 'weekly', '--json']));
    assert.equal(replay.id, cron.id, 'the idempotency key returns the same alarm');

    const list = json(await alarm(['list', '--json']));
    assert.equal(list.count, 2);
    assert.deepEqual(
      list.alarms.map((a: { kind: string; wake_message: string }) => [a.kind, a.wake_message]),
      [
        ['cron', 'weekly report'],
        ['once', 'check the oven'],
      ],
    );
    const oven = list.alarms[1];
    assert.deepEqual([oven.label, oven.payload], ['oven', { room: 'kitchen' }]);
    const table = await alarm(['list']);
    assert.match(table.stdout, /^id +kind +status +next fire +label +wake message$/m);
    assert.match(table.stdout, new RegExp(`^${cron.id} +cron 0 9 \\* \\* 1 +active .* weekly report$`, 'm'));

    const cancelled = json(await alarm(['cancel', oven.id, '--json']));
    assert.deepEqual([cancelled.id, cancelled.status], [oven.id, 'cancelled']);
    assert.deepEqual(json(await alarm(['list', '--limit', '1', '--json'])).alarms.length, 1);
  });

  test('the scheduler refusing is exit 1 with its reason: an unknown alarm, a wrong bearer (naming the setting), a bad cron', async () => {
    const unknown = await alarm(['cancel', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b']);
    assert.equal(unknown.code, 1);
    assert.match(oneLine(unknown), /^platform alarm: scheduler refused: 404 not_found: /);
    const bearer = await alarm(['list'], { SCHEDULER_TOKEN: 'wrong' });
    assert.equal(bearer.code, 1);
    assert.equal(
      oneLine(bearer),
      'platform alarm: scheduler refused: 401 unauthorized: invalid transport bearer; set SCHEDULER_TOKEN (npx platform secret SCHEDULER_TOKEN)',
    );
    const cron = await alarm(['create', 'x', '--cron', 'every tuesday']);
    assert.equal(cron.code, 1);
    assert.match(oneLine(cron), /^platform alarm: scheduler refused: 400 invalid_request: /);
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const away = await alarm(['list', '--url', nobody]);
    assert.equal(away.code, 1);
    assert.equal(oneLine(away), `platform alarm: cannot reach scheduler at ${nobody}: ECONNREFUSED`);
  });

  test('bad arguments are exit 2 with one line, before anything is sent', async () => {
    const cases: [string[], RegExp][] = [
      [['create', '--in', '10m'], /the wake message is required/],
      [['create', 'x'], /give exactly one of --in, --at or --cron/],
      [['create', 'x', '--in', '10m', '--at', '2030-01-01T00:00:00Z'], /give exactly one of --in, --at or --cron/],
      [['create', 'x', '--in', 'soon'], /--in must be a duration such as 90, 90s, 10m, 2h or 1d/],
      [['create', 'x', '--in', '10', '--timezone', 'UTC'], /--timezone goes with --cron/],
      [['create', 'x', '--in', '10', '--payload', '[1]'], /--payload must be a JSON object/],
      [['list', '--limit', '0'], /--limit must be an integer from 1 to 500/],
      [['cancel'], /usage: platform alarm cancel <id>/],
      [['snooze'], /usage: platform alarm create/],
      [['list', '--url', 'ftp://x'], /--url must be an http\(s\) URL/],
    ];
    for (const [args, expected] of cases) {
      const run = await alarm(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(oneLine(run), expected);
    }
  });
});
