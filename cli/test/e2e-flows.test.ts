import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pollUntil } from '@platform/testkit/eventually';
import { parseRawMessage } from '@platform/testkit/google-apis';
import { platformEngine } from '@platform/testkit/platform-up';
import { compiled, railScript, toolStep } from '@platform/testkit/rail-script';
import { openSse } from '@platform/testkit/sse-client';
import { createPublicClient, erc20Abi, type Hex, http, verifyTypedData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { json, startWorld, stepResult, type World } from './e2e-world.ts';

/*
 * Issue 16's end-to-end flows: `platform up` as a child process (real processes, real HTTP, the daemons the router
 * starts), a scripted model behind the real gateway, the development user talking to the router with their token and
 * approving each gate, a second user with the agent CLI. One platform per engine runs every flow in order; each flow
 * builds on the balances the one before left (see the root README.md, End-to-end flows).
 */

const engines = [platformEngine()];

const counterSource = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Counter { uint256 public count; function bump() external { count += 1; } }
`;

/** A settlement read (public routes). */
// biome-ignore lint/suspicious/noExplicitAny: the service's JSON as it comes.
async function read(world: World, path: string): Promise<any> {
  const answer = (await (await fetch(`${world.platform.url('settlement')}${path}`)).json()) as { ok: boolean; data: unknown };
  if (!answer.ok) throw new Error(`GET ${path}: ${JSON.stringify(answer)}`);
  return answer.data;
}

for (const engine of engines)
  describe(`the platform end to end on ${engine.name}`, () => {
    let world: World;
    let chain: ReturnType<typeof createPublicClient>;
    before(async () => {
      world = await startWorld(engine.postgresAdminUrl ? { postgresAdminUrl: engine.postgresAdminUrl } : {});
      chain = createPublicClient({ transport: http(world.platform.env.CONTRACTS_LOCAL_RPC_URL) });
    });
    after(async () => world?.close());

    test('money: a deposit on the local chain, a payment to another user’s agent and back, a withdrawal paid on chain; the reserve still equals the supply', async () => {
      // Bob deposits 5 on the local chain (development: minted tokens, a real vault deposit the watcher credits).
      const deposit = json(await world.bob(['deposit', '5', '--faucet', '--json']));
      assert.match(deposit.deposit.tx_hash, /^0x[0-9a-f]{64}$/);
      assert.equal((await chain.getTransactionReceipt({ hash: deposit.deposit.tx_hash })).status, 'success');

      // Bob pays Alice's agent 3 with the CLI; Alice's agent pays Bob 1 back through a delegated intent, after her approval.
      json(await world.bob(['pay', world.alice.did, '3', '--json']));
      world.model.setScript(
        railScript({
          compile: compiled('pay Bob 1'),
          plans: [{ steps: [toolStep('pay', 'payments.pay', { to: world.bobDid, amount: '1' })] }],
          answer: 'Paid Bob 1.',
        }),
      );
      const paid = await world.delegate('pay Bob 1');
      assert.equal(paid.answer, 'Paid Bob 1.');
      assert.equal(paid.gates.length, 1);
      assert.match(paid.gates[0] ?? '', /moves money: pays 1 to did:platform:/);
      const receipt = (await stepResult(world.alice, paid.intentId, 'pay')).receipt;
      assert.deepEqual([receipt.kind, receipt.from, receipt.to, receipt.amount], ['transfer', world.alice.did, world.bobDid, '1.000000']);

      // Bob withdraws 2.5 to an address he proves he holds; the vault pays it once the batch is anchored.
      const wallet = privateKeyToAccount(generatePrivateKey());
      const { message } = json(await world.bob(['withdraw', 'bind', wallet.address, '--json']));
      json(await world.bob(['withdraw', 'bind', wallet.address, '--signature', await wallet.signMessage({ message }), '--json']));
      const { withdrawal } = json(await world.bob(['withdraw', '2.5', '--json']));
      await pollUntil(async () => (await read(world, `/v1/withdrawal/${withdrawal.id}`)).withdrawal.status === 'confirmed', 'the withdrawal paid on chain');
      const info = await read(world, '/v1/info');
      const paidOut = await chain.readContract({ address: info.token_address as Hex, abi: erc20Abi, functionName: 'balanceOf', args: [wallet.address] });
      assert.equal(paidOut, 2_500_000n, 'the payout address holds 2.5 tokens (6 decimals)');

      assert.equal((await read(world, `/v1/account/${world.alice.did}`)).balance, '2.000000');
      assert.equal((await read(world, `/v1/account/${world.bobDid}`)).balance, '0.500000');
      // Fully reserved: what the vault holds is exactly what the ledger owes (nothing in flight once the payout confirmed).
      const supply = await read(world, '/v1/supply');
      assert.equal(supply.fully_reserved, true);
      assert.equal(supply.reserve, supply.supply);
      assert.equal(supply.supply, '2.500000');
    });

    test('marketplace: a delegated intent pays a listed service (gate, hold, provider call, capture); both receipts verify', async () => {
      world.model.setScript(
        railScript({
          compile: compiled('translate hello into French'),
          plans: [
            {
              steps: [
                toolStep('find', 'market.search', { query: 'french translation' }),
                toolStep('call', 'market.call', { service_id: world.serviceId, operation: 'translate', args: { text: 'hello' }, max_payment: '0.05' }, [
                  'find',
                ]),
              ],
            },
          ],
          answer: 'bonjour hello',
        }),
      );
      const before = world.translator.calls.length;
      const run = await world.delegate('translate hello into French');
      assert.equal(run.answer, 'bonjour hello');
      assert.equal(run.gates.length, 1, 'the search is a read; the paid call asks');
      assert.match(run.gates[0] ?? '', /moves money: pays up to 0\.05 for translate on marketplace service /);
      assert.deepEqual(world.translator.calls.slice(before), [{ operation: 'translate', args: { text: 'hello' } }], 'the provider was called once');
      const found = await stepResult(world.alice, run.intentId, 'find');
      assert.ok(found.results.some((listing: { id: string }) => listing.id === world.serviceId));

      const call = await stepResult(world.alice, run.intentId, 'call');
      assert.deepEqual([call.status, call.cost, call.result], ['succeeded', '0.010000', { text: 'bonjour hello' }]);
      // The marketplace's EIP-712 receipt, checked with viem alone, signed by the key that registered the listing on chain.
      const { receipt } = call;
      assert.equal(await verifyTypedData({ ...receipt, address: receipt.signer, primaryType: 'Receipt' }), true);
      const listing = (await (await fetch(`${world.platform.url('marketplace')}/v1/services/${world.serviceId}`)).json()) as {
        data: { registry: { tx_hash: Hex } };
      };
      const registration = await chain.getTransaction({ hash: listing.data.registry.tx_hash });
      assert.equal(receipt.signer.toLowerCase(), registration.from.toLowerCase());
      assert.deepEqual([receipt.message.caller, receipt.message.amount, receipt.message.status], [world.alice.did, '10000', 'succeeded']);

      // Settlement's receipt of the capture it names, verified with the kit's verifier (platform receipt verify).
      const seq = Number(receipt.message.settlementSeq);
      const capture = await read(world, `/v1/receipt/${seq}`);
      assert.deepEqual([capture.receipt.kind, capture.receipt.from, capture.receipt.amount], ['capture', world.alice.did, '0.010000']);
      await pollUntil(async () => (await read(world, `/v1/receipt/${seq}`)).batch != null, 'a checkpoint covers the capture');
      const verified = json(
        await world.platform.run(['receipt', 'verify', String(seq), '--json'], { PLATFORM_SETTLEMENT_URL: world.platform.url('settlement') }),
      );
      assert.deepEqual([verified.verified, verified.receipt.kind], [true, 'capture']);
      // The hold came first, on Alice's account; only the cost was taken.
      const movements = (await read(world, `/v1/transfers?did=${world.alice.did}&limit=10`)).transfers as { kind: string; seq: number }[];
      assert.ok(
        movements.some((movement) => movement.kind === 'hold' && movement.seq < seq),
        JSON.stringify(movements),
      );
      assert.equal((await read(world, `/v1/account/${world.alice.did}`)).balance, '1.990000');
    });

    test('contracts: an intent compiles and deploys within its spend cap; the same idempotency key again deploys nothing; past the cap nothing is signed', async () => {
      const deployArgs = { idempotency_key: `counter-${engine.name}`, chain_id: 'local', contract: 'Counter', project_id: 'e2e-counter' };
      const plan = (spendCapWei: string) => ({
        steps: [
          toolStep('compile', 'contracts.tachyon_compile', { sources: { 'src/Counter.sol': counterSource }, project_id: 'e2e-counter' }),
          toolStep('deploy', 'contracts.tachyon_deploy', { ...deployArgs, spend_cap_wei: spendCapWei }, ['compile']),
        ],
      });
      world.model.setScript(railScript({ compile: compiled('deploy the counter'), plans: [plan('10000000000000000')], answer: 'Deployed.' }));
      const first = await world.delegate('deploy the counter');
      assert.match(first.gates[0] ?? '', /deploys contract Counter on chain local/);
      const deployed = await stepResult(world.alice, first.intentId, 'deploy');
      assert.deepEqual([deployed.status, deployed.replayed], ['confirmed', false]);
      assert.notEqual(await chain.getCode({ address: deployed.address }), undefined, 'code at the address');
      const nonce = await chain.getTransactionCount({ address: deployed.deployer });

      const second = await world.delegate('deploy the counter');
      const again = await stepResult(world.alice, second.intentId, 'deploy');
      assert.deepEqual([again.address, again.tx_hash, again.replayed], [deployed.address, deployed.tx_hash, true]);
      assert.equal(await chain.getTransactionCount({ address: deployed.deployer }), nonce, 'no transaction sent');

      // A cap below the deployment's cost: refused before anything is signed.
      world.model.setScript(
        railScript({
          compile: compiled('deploy another counter'),
          plans: [
            {
              steps: [
                plan('1').steps[0],
                toolStep('deploy', 'contracts.tachyon_deploy', { ...deployArgs, idempotency_key: `capped-${engine.name}`, spend_cap_wei: '1' }, ['compile']),
              ],
            },
          ],
        }),
      );
      await assert.rejects(world.delegate('deploy another counter'), /forbidden: value plus maximum fee \(\d+ wei\) exceeds the per-transaction cap \(1 wei\)/);
      assert.equal(await chain.getTransactionCount({ address: deployed.deployer }), nonce, 'nothing signed past the cap');
    });

    test('mail: the user connects Google through the agent, an intent sends mail after the gate; the local mail server receives it; the daemon never sees the token', async () => {
      world.model.setScript(
        railScript({
          compile: compiled('connect my Google account'),
          plans: [{ steps: [toolStep('connect', 'connector.google-workspace_connect', {})] }],
          answer: 'Open the link to connect.',
        }),
      );
      const connect = await world.delegate('connect my Google account');
      const asked = JSON.stringify(await stepResult(world.alice, connect.intentId, 'connect'));
      const link = /(http:\/\/[^\s"]+)/.exec(asked)?.[1];
      assert.ok(link, asked);
      // The user consents at the provider in a browser, which comes back to the connector's callback.
      const back = await world.oauth.authorize(link);
      const page = await fetch(`${world.platform.url('connector')}/v1/connect/callback?${new URLSearchParams(back)}`);
      assert.equal(page.status, 200, await page.text());

      const mail = { to: ['bob@example.com'], subject: 'Lunch', body: 'Friday at noon?' };
      world.model.setScript(
        railScript({
          compile: compiled('email bob about lunch'),
          plans: [{ steps: [toolStep('send', 'connector.google-workspace_mail_send', mail)] }],
          answer: 'Bob has the invitation.',
        }),
      );
      const sent = await world.delegate('email bob about lunch');
      assert.equal(sent.answer, 'Bob has the invitation.');
      assert.match(sent.gates.at(-1) ?? '', /acts outside your account: send an email .*bob@example\.com/);
      const sends = world.google.requests.filter((request) => request.path.endsWith('/messages/send'));
      assert.equal(sends.length, 1);
      const raw = parseRawMessage(String((sends[0]?.body as { raw?: string } | undefined)?.raw));
      assert.deepEqual([raw.headers.to, raw.headers.subject, raw.body], ['bob@example.com', 'Lunch', 'Friday at noon?']);
      const accessToken = (sends[0]?.authorization ?? '').replace(/^Bearer /, '');
      assert.ok(accessToken.length > 10, 'the connector called Google with the vaulted token');
      assert.ok(!world.aliceVolume().includes(accessToken), 'the access token reached the daemon’s volume or log');
    });

    test('alarm: the agent sets an alarm; the daemon goes to sleep; the scheduler fires it, the router wakes the daemon, and the wake becomes a turn whose answer shows in /events', async (t) => {
      const daemons = () => world.platform.processes().filter((process) => process.command.includes('daemon/dist/main.js'));
      const { promise: replyHeld, resolve: releaseReply } = Promise.withResolvers<Record<string, unknown>>();
      // Also when an assertion fails: a turn held for ever would keep the daemon, and the platform's stop, waiting.
      t.after(() => releaseReply({ reply: 'Time to water the plants!', task: null, remember: [] }));
      const { promise: wakeArrived, resolve: wakeTurn } = Promise.withResolvers<void>();
      world.model.setScript(
        railScript({
          compile: compiled('remind me to water the plants'),
          plans: [{ steps: [toolStep('alarm', 'alarms.set', { wake_message: 'Water the plants', delay_seconds: 5, label: 'plants' })] }],
          answer: 'I will remind you in 5 seconds.',
          chat: (request) => {
            if (!request.prompt.includes('Water the plants')) return undefined;
            wakeTurn();
            return replyHeld;
          },
        }),
      );
      const set = await world.delegate('remind me to water the plants in 5 seconds');
      const alarm = await stepResult(world.alice, set.intentId, 'alarm');
      assert.equal(alarm.status, 'active');
      const awake = daemons().map((process) => process.pid);
      assert.equal(awake.length, 1, 'the router runs Alice’s daemon');

      // Nobody uses it: the router stops it. The alarm has not fired yet (no wake turn reached the model).
      await pollUntil(() => daemons().length === 0, 'Alice’s daemon to be stopped when idle', { timeoutMs: 30_000 });
      const chats = world.model.received.filter((request) => request.schemaName === 'chat_turn').length;
      assert.ok(new Date(alarm.next_fire_at).getTime() > Date.now(), 'the daemon slept before the alarm was due');

      // The scheduler fires; the router's wake route starts the daemon again, which turns the wake into a chat turn.
      await wakeArrived;
      assert.equal(world.model.received.filter((request) => request.schemaName === 'chat_turn').length, chats + 1);
      const woken = daemons();
      assert.equal(woken.length, 1);
      assert.notEqual(woken[0]?.pid, awake[0], 'a new daemon process');
      const events = await openSse(`${world.platform.url('router')}/events`, { authorization: `Bearer ${world.token}` });
      try {
        assert.equal(events.status, 200, await (events.status === 200 ? '' : events.body));
        releaseReply({ reply: 'Time to water the plants!', task: null, remember: [] });
        await pollUntil(() => events.events.some((event) => event.event === 'say'), 'the turn’s answer in /events', { timeoutMs: 30_000 });
        const say = events.events.find((event) => event.event === 'say');
        assert.match(JSON.stringify(say?.data), /Time to water the plants!/);
      } finally {
        events.close();
      }
    });

    test('alarm from the command line: `platform agent use` links a key of Alice’s with her agent through the router; the alarm the CLI makes with it wakes her agent; a key not linked is refused when its alarm is made', async (t) => {
      const home = mkdtempSync(join(tmpdir(), 'e2e-alice-cli-'));
      t.after(() => rmSync(home, { recursive: true, force: true }));
      const settings = {
        HOME: home,
        DAEMON_URL: world.platform.url('router'),
        PLATFORM_DAEMON_TOKEN: world.token,
        PLATFORM_SCHEDULER_URL: world.platform.url('scheduler'),
        SCHEDULER_TOKEN: await world.platform.secret('SCHEDULER_TOKEN'),
      };
      const cli = (args: readonly string[], file = 'agent.json') => world.platform.run(args, { ...settings, PLATFORM_AGENT_FILE: join(home, file) });

      // What the README used to say: a key of her own for her account id. The scheduler now refuses its alarm at once.
      json(await cli(['agent', 'new', '--user-id', world.alice.userId, '--json'], 'unlinked.json'));
      const refused = await cli(['alarm', 'create', 'never delivered', '--in', '1m'], 'unlinked.json');
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, /scheduler refused: 403 forbidden: .*could not wake its agent.*platform agent use.*\(wake_refused\)/);

      const used = json(await cli(['agent', 'use', '--json']));
      assert.deepEqual([used.user_id, used.agent_did, used.key_created, used.linked], [world.alice.userId, world.alice.did, true, true]);
      assert.equal(json(await cli(['agent', 'use', '--json'])).linked, false, 'linked once');
      const { promise: woke, resolve: wake } = Promise.withResolvers<void>();
      world.model.setScript(
        railScript({
          chat: (request) => {
            if (!request.prompt.includes('Feed the cat')) return undefined;
            wake();
            return { reply: 'Feeding time!', task: null, remember: [] };
          },
        }),
      );
      const alarm = json(await cli(['alarm', 'create', 'Feed the cat', '--in', '1s', '--json']));
      await woke;
      await pollUntil(
        async () =>
          json(await cli(['alarm', 'list', '--json'])).alarms.some(
            (entry: { id: string; status: string }) => entry.id === alarm.id && entry.status === 'fired',
          ),
        'the CLI’s alarm fired and its wake was taken',
      );
    });
  });
