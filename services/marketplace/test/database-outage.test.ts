import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseAmount } from '@platform/kit/money';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { type DrillAnswer, driveThroughOutage } from '@platform/testkit/outage-drill';
import { type Caller, type PaidMarketplace, paidWorldForFile, payTerms, providerManifest, seedActiveListing, startPaidMarketplace } from './paid-fixtures.ts';

const behind = await postgresBehindLink();
// Settlement and the provider only when the suite runs (they take seconds to start).
const world = behind ? paidWorldForFile() : undefined;

const micros = (text: string): bigint => {
  const parsed = parseAmount(text, { allowZero: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.micros;
};

describe('the marketplace while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 90_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let market: PaidMarketplace;
  let serviceId: string;
  before(async () => {
    const { settlement, provider } = world as NonNullable<typeof world>;
    market = await startPaidMarketplace(engine, settlement);
    serviceId = await seedActiveListing(market.database.db, providerManifest(provider.url));
  });
  after(async () => {
    outage.end();
    await market?.close();
    await close();
  });

  test('defers paid calls with 503 and Retry-After, then serves again; a caller is charged exactly for the calls it was answered', async () => {
    const callers: Caller[] = [];
    for (let i = 0; i < 4; i++) callers.push(await market.fundedCaller('10'));
    const judged = (answer: Awaited<ReturnType<PaidMarketplace['call']>>): DrillAnswer => ({
      status: answer.status,
      retryAfter: answer.headers['retry-after'] as string | undefined,
      body: answer.body,
    });
    const { acknowledged } = await driveThroughOutage({
      outage,
      retryable: (body) => (body as { detail?: { retryable?: unknown } }).detail?.retryable === true,
      call: async (n) => {
        const caller = callers[n % callers.length] as Caller;
        const body = { operation: 'echo', args: { units: 1 + (n % 3), text: `outage ${n}` } };
        const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
        if (challenge.status !== 402) return { answer: judged(challenge) };
        const wire = payTerms(caller.key, challenge.body.detail.terms);
        const paid = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers: { 'x-ledger-payment': wire } });
        return { answer: judged(paid), ack: { caller, invocation: paid.body.data?.invocation_id as string, cost: paid.body.data?.cost as string } };
      },
    });
    await market.deps.payments.ledger.flushed();
    for (const caller of callers) {
      const answered = acknowledged.filter((call) => call.caller === caller);
      const spent = answered.reduce((sum, call) => sum + micros(call.cost), 0n);
      const account = await market.ledger.account(caller.did);
      assert.equal(micros(account.balance), micros('10') - spent, `${caller.did} paid for the ${answered.length} calls it was answered, and no more`);
      assert.equal(account.held, '0.000000', 'no hold left open');
    }
    for (const { caller, invocation } of acknowledged) {
      const read = await market.call('GET', `/v1/invocations/${invocation}`, { caller });
      assert.equal(read.body.data?.status, 'succeeded', `the answered call ${invocation} is recorded`);
    }
  });
});
