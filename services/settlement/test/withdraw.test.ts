import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { testEngines } from '@platform/testkit/databases';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type Settlement, startSettlement, vaultAddress } from './harness.ts';

for (const engine of testEngines()) {
  describe(`payout binding and withdrawals on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine);
    });
    after(async () => s.close());

    async function bound(amount = '100') {
      const agent = await s.fundedAgent(amount);
      const wallet = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 125) });
      const response = await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address.toLowerCase(), signature } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return { agent, wallet };
    }

    test('binding needs the address’s own EIP-191 signature over the message naming the DID and chain', async () => {
      const agent = await s.fundedAgent('1');
      const wallet = privateKeyToAccount(generatePrivateKey());
      const typo = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 125) });
      const wrongAddress = await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: typo.address, signature } });
      assert.equal(wrongAddress.status, 400);
      assert.equal(wrongAddress.body.error?.expected_message, payoutBindingMessage(agent.did, typo.address, 125));
      const other = await s.agent();
      const otherDid = await wallet.signMessage({ message: payoutBindingMessage(other.did, wallet.address, 125) });
      assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature: otherDid } })).status, 400);
      const otherChain = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 1) });
      assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature: otherChain } })).status, 400);
      // Flipping the case of any letter breaks an EIP-55 checksum: the usual mark of a typo.
      const letter = wallet.address.slice(2).search(/[a-fA-F]/) + 2;
      const flipped =
        wallet.address[letter] === wallet.address[letter]?.toUpperCase() ? wallet.address[letter]?.toLowerCase() : wallet.address[letter]?.toUpperCase();
      const badChecksum = `${wallet.address.slice(0, letter)}${flipped}${wallet.address.slice(letter + 1)}`;
      const checksumRefused = await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: badChecksum, signature } });
      assert.equal(checksumRefused.status, 400);
      assert.match(checksumRefused.body.error?.message ?? '', /checksum/);
      assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: '0x1234', signature } })).status, 400);
      const ok = await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature } });
      assert.equal(ok.status, 200);
      assert.equal((await s.call('GET', '/v1/balance', { token: agent.token })).body.data.payout_address, wallet.address);
    });

    test('binding before any credit is a 404: accounts exist from their first credit', async () => {
      const agent = await s.agent();
      const wallet = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 125) });
      assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature } })).status, 404);
    });

    test('withdraw needs a bound address, burns at once and records a pending payout; supply still equals reserve', async () => {
      const unbound = await s.fundedAgent('5');
      const refused = await s.call('POST', '/v1/withdraw', { token: unbound.token, body: { amount: '1' } });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error?.reason, 'no_payout_address');
      const { agent, wallet } = await bound('100');
      const withdrawn = await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: '40', swap_out: 'USDC' } });
      assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
      const withdrawal = withdrawn.body.data.withdrawal;
      assert.deepEqual(
        [withdrawal.status, withdrawal.amount, withdrawal.payout_address, withdrawal.swap_out],
        ['pending', '40.000000', wallet.address, 'USDC'],
      );
      assert.equal((await s.call('GET', '/v1/balance', { token: agent.token })).body.data.balance, '60.000000');
      const receipt = await s.call('GET', `/v1/receipt/${withdrawn.body.data.seq}`);
      assert.deepEqual([receipt.body.data.receipt.kind, receipt.body.data.receipt.to], ['withdraw', null]);
      const supply = await s.call('GET', '/v1/supply');
      assert.equal(supply.body.data.fully_reserved, true);
      assert.equal(supply.body.data.supply, supply.body.data.reserve);
      assert.equal(receipt.body.data.withdrawal.id, withdrawal.id, 'the withdraw receipt says where its payout stands');
      assert.equal(receipt.body.data.withdrawal.status, 'pending');
      const read = await s.call('GET', `/v1/withdrawal/${withdrawal.id}`);
      assert.deepEqual([read.body.data.withdrawal.status, read.body.data.anchored, read.body.data.payout], ['pending', false, null]);
      assert.equal((await s.call('GET', `/v1/withdrawal/${crypto.randomUUID()}`)).status, 404);
      assert.equal((await s.call('GET', '/v1/withdrawal/not-a-uuid')).status, 400);
    });

    test('withdraw refusals: swap_out format, more than the balance, a bad amount', async () => {
      const { agent } = await bound('10');
      for (const swap of ['usdc', '', 'TOOLONGTICKER', 'US-DC', '1ABC']) {
        const response = await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: '1', swap_out: swap } });
        assert.equal(response.status, 400, `swap_out ${swap}`);
      }
      assert.equal((await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: '1', swap_out: 'ABCDEFGHIJKL' } })).status, 200);
      assert.equal((await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: '9.000001' } })).status, 409);
      assert.equal((await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: 9 } })).status, 400);
      assert.equal((await s.call('POST', '/v1/withdraw', { token: agent.token, body: {} })).status, 400);
      assert.equal((await s.call('GET', '/v1/balance', { token: agent.token })).body.data.balance, '9.000000');
    });

    test('deposit instructions name the vault and the DID claim the vault credits', async () => {
      const agent = await s.agent();
      const deposit = await s.call('GET', '/v1/deposit', { token: agent.token });
      assert.equal(deposit.status, 200);
      assert.deepEqual([deposit.body.data.chain_id, deposit.body.data.vault_address, deposit.body.data.did], [125, vaultAddress, agent.did]);
      assert.match(deposit.body.data.claim.account, /^0x[0-9a-f]{64}$/);
      const claim = await s.database.db.selectFrom('deposit_claims').selectAll().where('account_hash', '=', deposit.body.data.claim.account).executeTakeFirst();
      assert.equal(claim?.did, agent.did, 'asking registers the claim the watcher credits by');
    });
  });
}
