import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { DaemonClient } from '@platform/client/daemon-client';
import { freePort } from '@platform/kit/free-port';
import { compiled, gatedPlan, railScript } from '@platform/testkit/rail-script';
import { runPlatform } from '@platform/testkit/run-command';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';

const token = 'cli-agent-token';

/** Runs `platform <args>` with `input` on stdin (and this HOME); resolves with the exit code and output. */
function platform(args: string[], options: { env?: Record<string, string>; input?: string } = {}) {
  return runPlatform(args, { env: { HOME: process.env.HOME ?? '', ...options.env }, ...(options.input === undefined ? {} : { input: options.input }) });
}

describe('platform delegate and platform journal verify against a daemon process', () => {
  let model: ScriptedModel;
  let daemon: ServiceProcess;

  before(async () => {
    model = await startScriptedModel(
      railScript({ compile: compiled('send the invoice'), plans: [gatedPlan('Send the invoice?', ['send', 'hold'])], answer: 'The invoice went out.' }),
    );
    daemon = await startServiceProcess('daemon', { PLATFORM_GATEWAY_URL: model.url, PLATFORM_DAEMON_TOKEN: token, DAEMON_MODEL_RETRIES: '0' });
  });
  after(async () => {
    await daemon?.stop();
    await model?.close();
  });

  test('delegate asks the person at the gate, prints progress to stderr and the answer to stdout, exit 0', async () => {
    const run = await platform(['delegate', 'send', 'the', 'invoice'], { env: { DAEMON_URL: daemon.url, PLATFORM_DAEMON_TOKEN: token }, input: '1\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'The invoice went out.');
    assert.match(run.stderr, /^intent [0-9a-f]{64}$/m);
    assert.match(run.stderr, /\? Send the invoice\?\n {2}1\) send\n {2}2\) hold/);
    assert.match(run.stderr, /· executing/);
  });

  test('delegate: no answer at all (end of input) denies; a wrong bearer or no prose fails clearly', async () => {
    const denied = await platform(['delegate', 'send the invoice'], { env: { DAEMON_URL: daemon.url, PLATFORM_DAEMON_TOKEN: token }, input: '' });
    assert.equal(denied.code, 0, denied.stderr);
    const client = new DaemonClient({ baseUrl: daemon.url, token });
    const id = /intent ([0-9a-f]{64})/.exec(denied.stderr)?.[1] as string;
    const gate = (await client.intent(id)).state.gates[0];
    assert.deepEqual([gate.status, gate.answered_by], ['denied', 'user']);

    const empty = await platform(['delegate'], { env: { DAEMON_URL: daemon.url } });
    assert.equal(empty.code, 2);
  });

  test('delegate names the setting to change: a wrong or missing token, a daemon that does not answer, a bad address or timeout', async () => {
    const refused = await platform(['delegate', 'x'], { env: { DAEMON_URL: daemon.url, PLATFORM_DAEMON_TOKEN: 'wrong' } });
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.trim(),
      `platform delegate: the daemon at ${daemon.url} refused the token in PLATFORM_DAEMON_TOKEN (401 unauthorized: invalid transport bearer); ` +
        'set PLATFORM_DAEMON_TOKEN: through the router, export PLATFORM_DAEMON_TOKEN=$(npx platform token) (a token lasts an hour); ' +
        'for the daemon itself, $(npx platform secret PLATFORM_DAEMON_TOKEN)',
    );
    assert.ok(!refused.stderr.includes('wrong'), 'the token is not echoed');
    const unset = await platform(['delegate', 'x'], { env: { DAEMON_URL: daemon.url } });
    assert.equal(unset.code, 1);
    assert.match(
      unset.stderr,
      /the daemon at \S+ wants a token and PLATFORM_DAEMON_TOKEN is not set \(401 unauthorized: missing transport bearer.*\); set PLATFORM_DAEMON_TOKEN: .*npx platform token/,
    );

    // Nothing listens on a port just found free.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await platform(['delegate', 'x'], { env: { DAEMON_URL: nowhere, PLATFORM_DAEMON_TOKEN: token } });
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      new RegExp(
        `^platform delegate: the daemon at ${nowhere} did not answer \\(connect ECONNREFUSED [^)]+\\): is it running\\? DAEMON_URL \\(or --url\\) says where it listens: http://127\\.0\\.0\\.1:8443 through the router`,
      ),
    );
    const withCredentials = await platform(['delegate', 'x'], { env: { DAEMON_URL: nowhere.replace('//', '//me:secret@'), PLATFORM_DAEMON_TOKEN: token } });
    assert.match(withCredentials.stderr, new RegExp(`the daemon at ${nowhere} did not answer`), 'the address without its password');

    const noScheme = await platform(['delegate', 'x'], { env: { DAEMON_URL: '127.0.0.1:8080' } });
    assert.equal(noScheme.code, 2);
    assert.match(noScheme.stderr, /DAEMON_URL \(or --url\) must be the daemon's http\(s\) address/);
    const badTimeout = await platform(['delegate', '--timeout', 'soon', 'x'], { env: { DAEMON_URL: daemon.url } });
    assert.deepEqual([badTimeout.code, badTimeout.stderr.trim()], [2, 'platform delegate: --timeout takes the longest wait in seconds, like 90 or 1.5']);
  });

  test('delegate --timeout 1.5 reports the wait it was given (the intent held in planning, so it cannot finish first)', async () => {
    const stages = railScript({
      compile: compiled('send the invoice'),
      plans: [gatedPlan('Send the invoice?', ['send', 'hold'])],
      answer: 'The invoice went out.',
    });
    const { promise: hold, resolve: release } = Promise.withResolvers<void>();
    model.setScript(async (request) => {
      if (request.schemaName === 'plan') await hold;
      return stages(request);
    });
    try {
      const run = await platform(['delegate', '--timeout', '1.5', 'send the invoice'], { env: { DAEMON_URL: daemon.url, PLATFORM_DAEMON_TOKEN: token } });
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^platform delegate: timeout: the delegated task did not finish within 1\.5 s$/m);
      const id = /intent ([0-9a-f]{64})/.exec(run.stderr)?.[1] as string;
      await new DaemonClient({ baseUrl: daemon.url, token }).cancel(id);
    } finally {
      release();
      model.setScript(stages);
    }
  });

  test('journal verify passes a real journal and names the first bad envelope of a tampered one', async () => {
    const client = new DaemonClient({ baseUrl: daemon.url, token });
    const me = await client.me();
    const ok = await platform(['journal', 'verify', daemon.dataDir, '--public-key', me.public_key]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const lines = ok.stdout.trim().split('\n');
    assert.ok(lines.length >= 2);
    for (const line of lines) assert.match(line, /^ok {3}[0-9a-f]{64} {2}\d+ envelopes, last intent\.(attest|fail|cancel)$/);

    const keyFromFolder = await platform(['journal', 'verify', daemon.dataDir]);
    assert.equal(keyFromFolder.code, 0);
    assert.match(keyFromFolder.stderr, /using the public key in .*identity\.json/);

    const other = generateAgentKey();
    const foreign = await platform(['journal', 'verify', daemon.dataDir, '--public-key', other.publicKeyHex]);
    assert.equal(foreign.code, 1);
    assert.match(foreign.stdout, /BAD {2}[0-9a-f]{64} {2}envelope 1 \(1-intent\.created\.json\): signature does not verify/);

    // Tamper with copies: an edited body, a missing envelope.
    const journal = join(daemon.dataDir, 'journal');
    // An intent that was planned (the timed-out one was cancelled in planning and has no plan).
    const folder = readdirSync(journal)
      .map((name) => join(journal, name))
      .find((path) => existsSync(join(path, '3-intent.planned.json'))) as string;
    const edited = join(folder, '3-intent.planned.json');
    const original = readFileSync(edited, 'utf8');
    try {
      const envelope = JSON.parse(original);
      envelope.body.steps[0].question = 'Send it to someone else?';
      writeFileSync(edited, JSON.stringify(envelope));
      const tampered = await platform(['journal', 'verify', folder, '--public-key', me.public_key]);
      assert.equal(tampered.code, 1);
      assert.match(tampered.stdout, /BAD .* envelope 3 \(3-intent\.planned\.json\): signature does not verify/);
    } finally {
      writeFileSync(edited, original);
    }
    const moved = join(folder, '4-step.skipped.json.bak');
    const fourth = readdirSync(folder).find((name) => name.startsWith('4-')) as string;
    renameSync(join(folder, fourth), moved);
    try {
      const cut = await platform(['journal', 'verify', folder, '--public-key', me.public_key]);
      assert.equal(cut.code, 1);
      assert.match(cut.stdout, /envelope 4 \(.*\): envelope 4 is missing/);
    } finally {
      renameSync(moved, join(folder, fourth));
    }
    assert.equal((await platform(['journal', 'verify', folder, '--public-key', me.public_key])).code, 0, 'whole again');
  });

  test('journal verify: usage errors exit 2', async () => {
    assert.equal((await platform(['journal'])).code, 2);
    assert.equal((await platform(['journal', 'verify', daemon.dataDir, '--public-key', 'zz'])).code, 2);
    assert.equal((await platform(['journal', 'verify', daemon.dataDir, '--public-key', 'ab'.repeat(32), '--extra'])).code, 2);
    const none = await platform(['journal', 'verify', join(daemon.dataDir, 'conversations'), '--public-key', 'ab'.repeat(32)]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no intent journals/);
  });
});
