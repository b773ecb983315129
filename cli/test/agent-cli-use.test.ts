import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { json, oneLine, platform, startInProcess, tempFolder } from './agent-cli-harness.ts';

/*
 * `platform agent use`: the one way to act as your own agent from the command line. The daemon never hands out its
 * key; the CLI's key is linked with it (public key and a signature only), so the alarms the CLI makes wake it.
 */

describe('platform agent use', () => {
  const userId = randomUUID();
  const bearer = 'daemon-bearer-for-the-agent-use-test-0123456789';
  let daemon: StartedService;
  let home: ReturnType<typeof tempFolder>;
  const settings = () => ({ DAEMON_URL: daemon.url, PLATFORM_DAEMON_TOKEN: bearer });
  before(async () => {
    home = tempFolder('agent-cli-use-');
    daemon = await startInProcess(() => import('../../services/daemon/src/main.ts'), { DAEMON_USER_ID: userId, PLATFORM_DAEMON_TOKEN: bearer });
  });
  after(async () => {
    await daemon?.stop();
    home?.remove();
  });

  test('without a key: makes one for the agent’s user and links it with the agent (its public key, never the seed); again, it is linked already', async () => {
    const used = json(await platform(['agent', 'use', '--json'], home.path, settings()));
    const me = (await (await fetch(`${daemon.url}/me`, { headers: { authorization: `Bearer ${bearer}` } })).json()) as { data: { did: string } };
    assert.deepEqual(
      [used.user_id, used.agent_did, used.key_created, used.linked, used.file],
      [userId, me.data.did, true, true, join(home.path, '.config', 'platform', 'agent.json')],
    );
    assert.match(used.did, new RegExp(`^did:platform:${userId}:[0-9a-f]{16}$`));
    const linked = (await (await fetch(`${daemon.url}/wake-keys`, { headers: { authorization: `Bearer ${bearer}` } })).json()) as {
      data: { keys: { did: string; public_key: string }[] };
    };
    assert.deepEqual(
      linked.data.keys.map((key) => [key.did, key.public_key]),
      [[used.did, used.public_key]],
    );
    const again = json(await platform(['agent', 'use', '--json'], home.path, settings()));
    assert.deepEqual([again.did, again.key_created, again.linked], [used.did, false, false]);
  });

  test('a key of another user, a wrong bearer, no daemon: exit 1 with one line saying so', async () => {
    const other = join(home.path, 'bob.json');
    assert.equal((await platform(['agent', 'new', '--user-id', 'bob', '--file', other], home.path)).code, 0);
    const foreign = await platform(['agent', 'use', '--file', other], home.path, settings());
    assert.equal(foreign.code, 1);
    assert.equal(
      oneLine(foreign),
      `platform agent: the agent key in ${other} is user bob's, and this agent serves user ${userId}: give another key file (--file) to act for it`,
    );
    const wrong = await platform(['agent', 'use'], home.path, { ...settings(), PLATFORM_DAEMON_TOKEN: 'wrong' });
    assert.equal(wrong.code, 1);
    assert.match(oneLine(wrong), /^platform agent: daemon refused: 401 unauthorized: .*PLATFORM_DAEMON_TOKEN/);
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await platform(['agent', 'use', '--url', nowhere], home.path, settings());
    assert.equal(oneLine(unreachable), `platform agent: cannot reach daemon at ${nowhere}: ECONNREFUSED`);
    assert.equal((await platform(['agent', 'show', '--url', nowhere], home.path)).code, 2, '--url is for agent use');
  });
});
