import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkReserve, ReserveWatch, reserveProblem } from './reserve-check.ts';

const totals = { available: 10_000_000n, held: 0n, withdrawn: 0n, chainDeposits: 10_000_000n, faucetDeposits: 0n, unclaimed: 0n };
/** The check at `block` with the vault holding `reserve` micros against a supply of 10. */
const at = (block: bigint, reserve: bigint, tokens = reserve) => checkReserve({ block, reserve, paidOut: 0n, tokens }, totals);

describe('reserve checks in a row', () => {
  test('a disagreement that the next check does not repeat (a node that had not served the block yet) raises nothing', () => {
    const watch = new ReserveWatch();
    assert.deepEqual([watch.observe(at(5n, 15_000_000n)), watch.observe(at(5n, 10_000_000n))], ['doubt', 'ok']);
    assert.equal(watch.alarm, undefined);
  });

  test('a disagreement seen on two checks in a row is the alarm, and it stands', () => {
    const watch = new ReserveWatch();
    assert.deepEqual([watch.observe(at(5n, 9_000_000n)), watch.observe(at(6n, 9_000_000n))], ['doubt', 'alarm']);
    assert.equal(watch.alarm, 'supply and reserve disagree at block 6: shortfall 1.000000');
    assert.equal(watch.observe(at(7n, 10_000_000n)), 'alarm', 'an agreeing check later does not end the alarm');
  });

  test('a vault holding fewer tokens than its reserve fails the check, more tokens than it does not', () => {
    const short = at(5n, 10_000_000n, 6_000_000n);
    assert.deepEqual([short.ok, short.shortfall, short.vault_tokens, short.token_shortfall], [false, '0.000000', '6.000000', '4.000000']);
    assert.equal(reserveProblem(short), 'the vault holds 6.000000 tokens at block 5 but owes 10.000000: tokens left it without a payout');
    assert.equal(at(5n, 10_000_000n, 12_000_000n).ok, true, 'tokens sent to the vault without deposit are not owed to anyone');
    const watch = new ReserveWatch();
    assert.deepEqual([watch.observe(short), watch.observe(at(6n, 10_000_000n, 6_000_000n))], ['doubt', 'alarm']);
    assert.match(watch.alarm ?? '', /^the vault holds 6\.000000 tokens at block 6/);
  });

  test('an agreeing check between two disagreements ends the doubt: each is read again', () => {
    const watch = new ReserveWatch();
    assert.deepEqual([watch.observe(at(5n, 9_000_000n)), watch.observe(at(6n, 10_000_000n)), watch.observe(at(7n, 9_000_000n))], ['doubt', 'ok', 'doubt']);
  });
});
