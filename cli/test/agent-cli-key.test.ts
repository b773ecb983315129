import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentKeyFromSeed } from '@platform/client/agent-key';
import { json, oneLine, platform, tempFolder } from './agent-cli-harness.ts';

describe('platform agent new and agent show', () => {
  let home: ReturnType<typeof tempFolder>;
  let defaultPath: string;
  before(() => {
    home = tempFolder('agent-cli-home-');
    defaultPath = join(home.path, '.config', 'platform', 'agent.json');
  });
  after(() => home.remove());

  test('without a key file, every agent command says how to make one (exit 1)', async () => {
    for (const args of [['agent', 'show'], ['balance'], ['alarm', 'list'], ['market', 'quote', 'x', 'y']]) {
      const run = await platform(args, home.path);
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(oneLine(run), `platform ${args[0]}: no agent key at ${defaultPath}; create one with \`platform agent new\``);
      assert.equal(run.stdout, '');
    }
  });

  test('new writes ~/.config/platform/agent.json readable by its owner only, prints the DID and key but never the seed', async () => {
    const run = await platform(['agent', 'new', '--user-id', 'alice', '--json'], home.path);
    assert.equal(run.code, 0, run.stderr);
    const shown = json(run);
    assert.deepEqual(Object.keys(shown), ['did', 'public_key', 'user_id', 'file']);
    assert.equal(shown.file, defaultPath);
    assert.equal(statSync(defaultPath).mode & 0o777, 0o600);
    assert.equal(statSync(join(home.path, '.config', 'platform')).mode & 0o777, 0o700);
    const file = JSON.parse(readFileSync(defaultPath, 'utf8'));
    assert.deepEqual(Object.keys(file), ['version', 'user_id', 'seed', 'did', 'public_key']);
    const key = agentKeyFromSeed(file.seed, 'alice');
    assert.deepEqual([shown.did, shown.public_key, shown.user_id], [key.did, key.publicKeyHex, 'alice']);
    assert.equal(shown.did, `did:platform:alice:${key.publicKeyHex.slice(0, 16)}`);
    assert.ok(!run.stdout.includes(file.seed) && !run.stderr.includes(file.seed), 'the seed is never printed');

    const table = await platform(['agent', 'show'], home.path);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^field +value\n/);
    assert.match(table.stdout, new RegExp(`^did +${shown.did}$`, 'm'));
    assert.match(table.stdout, new RegExp(`^public_key +${shown.public_key}$`, 'm'));
    assert.ok(!table.stdout.includes(file.seed));
    assert.deepEqual(json(await platform(['agent', 'show', '--json'], home.path)), shown);
  });

  test('new refuses to overwrite an existing key file; --file and PLATFORM_AGENT_FILE choose another place', async () => {
    const before = readFileSync(defaultPath, 'utf8');
    const again = await platform(['agent', 'new'], home.path);
    assert.equal(again.code, 1);
    assert.match(oneLine(again), /agent\.json already exists; not overwriting an agent key/);
    assert.equal(readFileSync(defaultPath, 'utf8'), before);

    const elsewhere = join(home.path, 'keys', 'bot.json');
    const made = json(await platform(['agent', 'new', '--file', elsewhere, '--json'], home.path));
    assert.equal(made.file, elsewhere);
    assert.match(made.user_id, /^[0-9a-f-]{36}$/, 'the user id defaults to a new UUID');
    assert.equal(json(await platform(['agent', 'show', '--json'], home.path, { PLATFORM_AGENT_FILE: elsewhere })).did, made.did);
  });

  test('a key file others can read is refused, as ssh refuses one; a file whose DID does not match its seed too', async () => {
    chmodSync(defaultPath, 0o644);
    try {
      const run = await platform(['agent', 'show'], home.path);
      assert.equal(run.code, 1);
      assert.equal(oneLine(run), `platform agent: ${defaultPath} can be read by others (mode 644); run \`chmod 600 ${defaultPath}\``);
    } finally {
      chmodSync(defaultPath, 0o600);
    }
  });

  test('PLATFORM_AGENT_KEY with PLATFORM_AGENT_USER_ID is used instead of a file (as a daemon hands its key on)', async () => {
    const key = agentKeyFromSeed('ab'.repeat(32), 'bob');
    const shown = json(await platform(['agent', 'show', '--json'], home.path, { PLATFORM_AGENT_KEY: key.seedHex, PLATFORM_AGENT_USER_ID: 'bob' }));
    assert.deepEqual(shown, { did: key.did, public_key: key.publicKeyHex, user_id: 'bob', file: 'PLATFORM_AGENT_KEY' });
    const missingUser = await platform(['agent', 'show'], home.path, { PLATFORM_AGENT_KEY: key.seedHex });
    assert.equal(missingUser.code, 1);
    assert.match(oneLine(missingUser), /PLATFORM_AGENT_USER_ID must be set with PLATFORM_AGENT_KEY/);
  });

  test('usage errors exit 2 with one line', async () => {
    const cases: [string[], RegExp][] = [
      [['agent'], /^platform agent: usage: platform agent new/],
      [['agent', 'rotate'], /^platform agent: usage: platform agent new/],
      [['agent', 'new', '--user-id', 'has:colon'], /--user-id must be 1-128 of/],
      [['agent', 'new', '--colour', 'blue'], /^platform agent: Unknown option '--colour'$/],
      [['agent', 'show', '--user-id', 'x'], /--user-id is for `agent new`/],
    ];
    for (const [args, expected] of cases) {
      const run = await platform(args, home.path);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(oneLine(run), expected);
    }
    const help = await platform(['help'], home.path);
    assert.match(help.stdout, /agent new\|show/);
    assert.match(help.stdout, /receipt verify <seq>/);
  });
});
