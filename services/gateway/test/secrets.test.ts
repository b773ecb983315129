import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import pino from 'pino';
import { adminToken, callerHeaders, type Gateway, gatewayToken, models, newActor, startGateway, upstreamKey } from './harness.ts';

const userKey = 'sk-user-secret-key-c0ffee';

for (const engine of testEngines()) {
  describe(`secrets on ${engine.name}`, () => {
    let gw: Gateway;
    const lines: string[] = [];
    before(async () => {
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      // The most verbose level, so every line the gateway could ever write is checked.
      gw = await startGateway(engine, { logger: pino({ level: 'trace' }, sink) });
    });
    after(async () => gw.close());

    test('no key or token reaches a log line or an answer, on success or failure', async () => {
      const actor = newActor();
      const answers: string[] = [];
      const record = async (promise: Promise<{ status: number; text: string; headers: Headers }>) => {
        const response = await promise;
        answers.push(response.text, JSON.stringify([...response.headers]));
      };
      const chat = (content: string, extra: Record<string, string> = {}, bearer?: string | null) =>
        record(
          gw.http('POST', '/v1/chat/completions', {
            headers: callerHeaders(actor, 'compiler', extra),
            body: { model: models.small, messages: [{ role: 'user', content }] },
            ...(bearer === undefined ? {} : { bearer }),
          }),
        );
      const byo = { 'x-platform-byo-api-key': 'true', 'x-platform-user-api-key': userKey };
      await chat('hello');
      await chat('hello', byo);
      await chat('[status=401]', byo);
      await chat('[no-usage]');
      await chat('hello', { 'x-platform-user-api-key': userKey });
      await chat('hello', {}, 'wrong-token');
      await chat('hello', {}, adminToken);
      await record(
        gw.http('POST', '/v1/chat/completions', {
          headers: callerHeaders(actor, 'compiler', byo),
          body: { model: models.offList, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        }),
      );
      await record(gw.admin('GET', '/spend'));
      await record(gw.admin('GET', '/spend', undefined, gatewayToken));
      assert.ok(lines.length > 10, `the gateway logged (${lines.length} lines)`);
      assert.ok(
        gw.upstream.received.some((call) => call.headers.authorization === `Bearer ${userKey}`),
        'the user key did go upstream',
      );
      for (const secret of [gatewayToken, adminToken, upstreamKey, userKey]) {
        assert.ok(!lines.some((line) => line.includes(secret)), `${secret} is not in the log`);
        assert.ok(!answers.some((answer) => answer.includes(secret)), `${secret} is not in an answer`);
      }
    });
  });
}
