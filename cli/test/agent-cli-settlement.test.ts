import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AgentKey, agentKeyFromSeed, generateAgentKey } from '@platform/client/agent-key';
import { SettlementClient } from '@platform/client/settlement-client';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { json, oneLine, platform, startInProcess, tempFolder } from './agent-cli-harness.ts';

const ledgerToken = 'agent-cli-ledger-token';

describe('platform balance, pay, deposit, withdraw and receipt verify against settlement', () => {
  let settlement: StartedService;
  let home: ReturnType<typeof tempFolder>;
  let env: Record<string, string>;
  let payer: AgentKey;
  const payee = generateAgentKey('payee');
  const run = (args: string[], extra: Record<string, string> = {}) => platform(args, home.path, { ...env, ...extra });

  before(async () => {
    home = tempFolder('agent-cli-home-');
    settlement = await startInProcess(() => import('../../services/settlement/src/main.ts'), { SETTLEMENT_DEV: 'true', LEDGER_TOKEN: ledgerToken });
    env = { PLATFORM_SETTLEMENT_URL: settlement.url, LEDGER_TOKEN: ledgerToken, PLATFORM_AGENT_FILE: join(home.path, 'agent.json') };
    assert.equal((await run(['agent', 'new', '--user-id', 'payer'])).code, 0);
    const file = JSON.parse(readFileSync(env.PLATFORM_AGENT_FILE as string, 'utf8'));
    payer = agentKeyFromSeed(file.seed, file.user_id);
  });
  after(async () => {
    await settlement?.stop();
    home?.remove();
  });

  /** Closes the open window, so the receipts in it get a checkpoint (as the window's timer would). */
  const settle = () => new SettlementClient({ baseUrl: settlement.url, transportToken: ledgerToken, key: payer }).settle();

  test('deposit says where to deposit; --faucet credits development funds; balance shows them', async () => {
    const where = json(await run(['deposit', '--json']));
    assert.equal(where.did, payer.did);
    assert.match(where.claim.did_hash, /^0x[0-9a-f]{64}$/);
    assert.equal(where.steps.length, 2);
    assert.match((await run(['deposit'])).stdout, /^did_hash +0x[0-9a-f]{64}$/m);

    const credited = await run(['deposit', '10', '--faucet', '--json']);
    assert.equal(credited.code, 0, credited.stderr);
    assert.deepEqual([json(credited).deposit.amount, json(credited).deposit.source], ['10.000000', 'faucet']);
    assert.match((await run(['deposit', '0.5', '--faucet'])).stdout, /^seq +amount +source +deposit\n\d+ +0\.500000 +faucet +[0-9a-f-]{36}\n$/);
    const account = json(await run(['balance', '--json']));
    assert.deepEqual([account.did, account.balance, account.held], [payer.did, '10.500000', '0.000000']);
    const table = await run(['balance']);
    assert.match(table.stdout, /^did +balance +held +escrow bound +payout address\n/);
    assert.match(table.stdout, new RegExp(`^${payer.did} +10\\.500000 +0\\.000000 +0\\.000000 +-$`, 'm'));
  });

  test('pay moves funds to another DID and prints the seq; the refusals carry settlement’s reason', async () => {
    const paid = await run(['pay', payee.did, '2.5', '--idempotency-key', 'lunch', '--json']);
    assert.equal(paid.code, 0, paid.stderr);
    const { seq, receipt } = json(paid);
    assert.deepEqual([receipt.kind, receipt.from, receipt.to, receipt.amount], ['transfer', payer.did, payee.did, '2.500000']);
    assert.equal(json(await run(['pay', payee.did, '2.5', '--idempotency-key', 'lunch', '--json'])).seq, seq, 'a retry is the same payment');
    const payeeEnv = { PLATFORM_AGENT_KEY: payee.seedHex, PLATFORM_AGENT_USER_ID: 'payee' };
    assert.equal(json(await run(['balance', '--json'], payeeEnv)).balance, '2.500000');
    assert.match((await run(['pay', payee.did, '0.5'])).stdout, new RegExp(`^\\d+ +${payee.did} +0\\.500000 +\\d{4}-`, 'm'));

    const poor = await run(['pay', payee.did, '1000']);
    assert.equal(poor.code, 1);
    assert.match(oneLine(poor), /^platform pay: settlement refused: 409 conflict: .* \(insufficient_funds\)$/);
    const bearer = await run(['balance'], { LEDGER_TOKEN: 'wrong' });
    assert.equal(bearer.code, 1);
    assert.equal(
      oneLine(bearer),
      'platform balance: settlement refused: 401 unauthorized: invalid transport bearer; set LEDGER_TOKEN (npx platform secret LEDGER_TOKEN)',
    );
    const nobody = `http://127.0.0.1:${await freePort()}`;
    assert.equal(oneLine(await run(['balance', '--url', nobody])), `platform balance: cannot reach settlement at ${nobody}: ECONNREFUSED`);
  });

  test('withdraw needs a bound payout address: bind prints the text to sign, then binds with the signature', async () => {
    const unbound = await run(['withdraw', '1']);
    assert.equal(unbound.code, 1);
    assert.match(oneLine(unbound), /^platform withdraw: settlement refused: 409 conflict: .*\(no_payout_address\)$/);

    const wallet = privateKeyToAccount(generatePrivateKey());
    const toSign = json(await run(['withdraw', 'bind', wallet.address, '--json']));
    assert.equal(toSign.message, `platform-settlement: bind payout address ${wallet.address} to ${payer.did} on chain 125`);
    const badSignature = await run(['withdraw', 'bind', wallet.address, '--signature', `0x${'11'.repeat(65)}`]);
    assert.equal(badSignature.code, 1);
    assert.match(oneLine(badSignature), /^platform withdraw: settlement refused: 400 invalid_request: /);
    const signature = await wallet.signMessage({ message: toSign.message });
    assert.equal((await run(['withdraw', 'bind', wallet.address, '--signature', signature])).code, 0);

    const out = await run(['withdraw', '1', '--json']);
    assert.equal(out.code, 0, out.stderr);
    const { withdrawal } = json(out);
    assert.deepEqual([withdrawal.amount, withdrawal.payout_address, withdrawal.status], ['1.000000', wallet.address, 'pending']);
    const status = json(await run(['withdraw', 'status', withdrawal.id, '--json']));
    assert.deepEqual([status.withdrawal.id, status.withdrawal.status, status.anchored], [withdrawal.id, 'pending', false]);
    assert.match(
      (await run(['withdraw', 'status', withdrawal.id])).stdout,
      new RegExp(`^${withdrawal.id} +1\\.000000 +${wallet.address} +pending +- +false +-$`, 'm'),
    );
    const unknown = await run(['withdraw', 'status', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b']);
    assert.equal(unknown.code, 1);
    assert.match(oneLine(unknown), /^platform withdraw: settlement refused: 404 not_found: withdrawal not found$/);
  });

  test('receipt verify: a real receipt verifies (exit 0) once a checkpoint covers it, and the latest checkpoint extends it', async () => {
    const { seq } = json(await run(['pay', payee.did, '0.25', '--json']));
    const pending = await run(['receipt', 'verify', String(seq)]);
    assert.equal(pending.code, 1);
    assert.match(pending.stderr, /not verified: no checkpoint covers the receipt yet/);

    await settle();
    const verified = await run(['receipt', 'verify', String(seq), '--json']);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stderr, /using the sequencer key .*\/v1\/info publishes/);
    const first = json(verified);
    assert.deepEqual([first.verified, first.seq, first.receipt.amount, first.tree_size, first.latest_tree_size], [true, seq, '0.250000', seq, seq]);

    await run(['pay', payee.did, '0.01']);
    await settle();
    const info = ((await (await fetch(`${settlement.url}/v1/info`)).json()) as { data: { sequencer_public_key: string } }).data;
    const pinned = await run(['receipt', 'verify', String(seq), '--public-key', info.sequencer_public_key]);
    assert.equal(pinned.code, 0, pinned.stderr);
    assert.equal(pinned.stderr, '', 'a pinned key needs no warning');
    assert.match(
      pinned.stdout,
      new RegExp(
        `verified: signed by ${info.sequencer_public_key}, leaf ${seq - 1} of the signed checkpoint of size ${seq}, which the latest checkpoint \\(size ${seq + 1}\\) extends`,
      ),
    );

    const otherKey = await run(['receipt', 'verify', String(seq), '--public-key', generateAgentKey().publicKeyHex]);
    assert.equal(otherKey.code, 1);
    assert.equal(oneLine(otherKey), 'platform receipt: not verified: receipt: receipt.sequencer is not the expected sequencer key');
  });

  test('receipt verify: a tampered receipt or proof served in place of settlement’s is not verified (exit 1, one line)', async () => {
    const { seq } = json(await run(['pay', payee.did, '0.75', '--json']));
    await settle();
    let tamper: (record: { receipt: Record<string, unknown>; inclusion_proof: string[] }) => void = () => {};
    // Settlement's answers, passed through, except the receipt record, which `tamper` edits.
    const proxy = await listenOnFreePort(
      createServer(async (request, response) => {
        const answer = await fetch(`${settlement.url}${request.url}`);
        const body = (await answer.json()) as { data: Parameters<typeof tamper>[0] };
        if (request.url?.startsWith('/v1/receipt/')) tamper(body.data);
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      }),
    );
    const verify = () => run(['receipt', 'verify', String(seq), '--url', `http://127.0.0.1:${proxy.port}`]);
    try {
      assert.equal((await verify()).code, 0, 'passed through untouched, it verifies');
      tamper = (record) => {
        record.receipt.amount = '7.500000';
      };
      const edited = await verify();
      assert.equal(edited.code, 1);
      assert.match(edited.stderr, /not verified: receipt: signature does not verify over the receipt$/m);
      tamper = (record) => {
        record.inclusion_proof = record.inclusion_proof.map((hash) => hash.replace(/[0-9a-f]$/, (digit) => (digit === '0' ? '1' : '0')));
      };
      const proof = await verify();
      assert.equal(proof.code, 1);
      assert.match(proof.stderr, new RegExp(`not verified: inclusion proof: leaf ${seq - 1} does not lead to the root of the checkpoint of size ${seq}$`, 'm'));
    } finally {
      await proxy.close();
    }
  });

  test('bad arguments are exit 2 with one line', async () => {
    const cases: [string[], RegExp][] = [
      [['pay', 'bob', '1'], /the payee must be an agent DID/],
      [['pay', payee.did, '1.0000001'], /amount has more than 6 decimal places/],
      [['pay', payee.did], /usage: platform pay <did> <amount>/],
      [['pay', payee.did, '1', '--ref', 'order-1'], /--ref must be a 32-byte digest/],
      [['balance', '--faucet'], /balance does not take --faucet/],
      [['deposit', '5'], /deposits are made on chain from a wallet/],
      [['deposit', '--faucet'], /--faucet needs an amount/],
      [['withdraw', 'bind', 'nowhere'], /the payout address must be 0x \+ 40 hex/],
      [['withdraw', '1', '--signature', '0x00'], /--signature goes with `withdraw bind`/],
      [['receipt', 'verify'], /usage: platform receipt verify <seq>/],
      [['receipt', 'verify', 'first'], /seq must be an integer/],
      [['receipt', 'verify', '1', '--public-key', 'abc'], /--public-key must be 64 hex characters/],
    ];
    for (const [args, expected] of cases) {
      const result = await run(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(oneLine(result), expected);
    }
  });
});
