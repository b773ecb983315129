import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { marketplaceDomain, receiptTypes, type SignedMarketplaceReceipt, uuidBytes32, verifyMarketplaceReceipt } from './marketplace-receipt.ts';

const invocationId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const signer = privateKeyToAccount(generatePrivateKey());

/** A receipt signed as the marketplace signs one, answered as it answers one (integers as decimal strings). */
async function signed(): Promise<SignedMarketplaceReceipt> {
  const message = {
    invocationId: uuidBytes32(invocationId),
    serviceId: uuidBytes32('0190a1b2-c3d4-7e5f-8a9b-000000000001'),
    operation: 'translate',
    caller: 'did:platform:u:0123456789abcdef',
    rail: 'hold',
    status: 'succeeded',
    requestDigest: `0x${'1'.repeat(64)}`,
    responseDigest: `0x${'2'.repeat(64)}`,
    units: 1n,
    amount: 10_000n,
    settlementSeq: 42n,
    paymentId: uuidBytes32('0190a1b2-c3d4-7e5f-8a9b-000000000002'),
    startedAt: 1_780_000_000_000n,
    finishedAt: 1_780_000_000_100n,
  } as const;
  const domain = marketplaceDomain(31337);
  const signature = await signer.signTypedData({ domain, types: receiptTypes, primaryType: 'Receipt', message });
  return {
    invocation_id: invocationId,
    signer: signer.address,
    domain,
    message: Object.fromEntries(Object.entries(message).map(([name, value]) => [name, String(value)])),
    signature,
  };
}

const expected = { signer: signer.address, invocation: { invocation_id: invocationId, cost_micros: 10_000n } };

test('a receipt signed by the marketplace’s key verifies, against its invocation and cost', async () => {
  assert.deepEqual(await verifyMarketplaceReceipt(await signed(), expected), { ok: true, signer: signer.address });
  assert.equal((await verifyMarketplaceReceipt(await signed(), { signer: signer.address.toLowerCase() })).ok, true, 'addresses in any case');
});

test('a changed member, another signer, another invocation or a bad signature fails, saying why', async () => {
  const receipt = await signed();
  const changed = { ...receipt, message: { ...receipt.message, amount: '9000000' } };
  const refused = await verifyMarketplaceReceipt(changed, expected);
  assert.equal(refused.ok, false);
  assert.match(refused.ok ? '' : refused.reason, /^signed by 0x[0-9a-fA-F]{40}, not by the marketplace’s signer 0x/);
  const other = privateKeyToAccount(generatePrivateKey()).address;
  assert.match(JSON.stringify(await verifyMarketplaceReceipt(receipt, { signer: other })), /not by the marketplace’s signer/);
  assert.deepEqual(
    await verifyMarketplaceReceipt(receipt, { ...expected, invocation: { invocation_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c', cost_micros: 10_000n } }),
    {
      ok: false,
      reason: 'the receipt names another invocation',
    },
  );
  assert.deepEqual(await verifyMarketplaceReceipt(receipt, { ...expected, invocation: { invocation_id: invocationId, cost_micros: 1n } }), {
    ok: false,
    reason: 'the receipt’s amount is not what the invocation cost',
  });
  assert.deepEqual(await verifyMarketplaceReceipt({ ...receipt, signature: '0x1234' }, expected), { ok: false, reason: 'the signature is malformed' });
  assert.deepEqual(await verifyMarketplaceReceipt({ ...receipt, domain: { ...receipt.domain, name: 'Other' } }, expected), {
    ok: false,
    reason: 'not a marketplace receipt (its EIP-712 domain is another)',
  });
  assert.deepEqual(await verifyMarketplaceReceipt({ ...receipt, message: { ...receipt.message, units: '-1' } }, expected), {
    ok: false,
    reason: 'units is not an integer',
  });
  const { paymentId: _, ...missing } = receipt.message;
  assert.deepEqual(await verifyMarketplaceReceipt({ ...receipt, message: missing }, expected), { ok: false, reason: 'the receipt has no paymentId' });
});
