import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { privateKeyFromSeed, publicKeyHex, signMessage } from './auth/ed25519.ts';
import { canonicalJson } from './canonical-json.ts';
import { envelopeHash, type JournalEnvelope, signEnvelope, signedText, verifyChain } from './journal-envelope.ts';

const seed = 'a1'.repeat(32);
const privateKey = privateKeyFromSeed(seed);
const publicKey = publicKeyHex(privateKey);

function chain(kinds: string[]): JournalEnvelope[] {
  const envelopes: JournalEnvelope[] = [];
  let intentId: string | null = null;
  for (const [index, kind] of kinds.entries()) {
    const prev = envelopes.at(-1);
    const envelope = signEnvelope(privateKey, {
      intent_id: intentId,
      seq: index + 1,
      kind,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
      prev: prev === undefined ? null : envelopeHash(prev),
      body: { step: index, note: `é ${kind}` },
    });
    envelopes.push(envelope);
    intentId ??= envelopeHash(envelope);
  }
  return envelopes;
}

describe('journal envelopes', () => {
  it('signs the domain-prefixed RFC 8785 bytes, reproducible by hand', async () => {
    const [first] = chain(['intent.created']);
    assert.ok(first);
    const text = `platform-daemon-journal-v1\n${canonicalJson({ intent_id: null, seq: 1, kind: 'intent.created', at: first.at, prev: null, body: first.body })}`;
    assert.equal(signedText(first), text);
    assert.equal(first.signature, signMessage(privateKey, text));
    assert.equal(envelopeHash(first), createHash('sha256').update(canonicalJson(first)).digest('hex'));
  });

  it('accepts a whole chain and names the intent id as the hash of the first envelope', async () => {
    const envelopes = chain(['intent.created', 'intent.compiled', 'intent.planned', 'intent.attest']);
    const verdict = await verifyChain(envelopes, publicKey, envelopeHash(envelopes[0]!));
    assert.deepEqual(verdict, { ok: true, intentId: envelopeHash(envelopes[0]!), count: 4, lastKind: 'intent.attest' });
  });

  it('names the first bad envelope: edited body, reordering, a cut, a foreign key, a wrong folder', async () => {
    const envelopes = chain(['intent.created', 'intent.compiled', 'intent.planned', 'tool.call', 'intent.attest']);
    const edited = envelopes.map((envelope) => ({ ...envelope }));
    edited[2] = { ...edited[2]!, body: { step: 99 } };
    assert.deepEqual(pick(await verifyChain(edited, publicKey)), { ok: false, seq: 3, reason: 'signature does not verify' });

    const reordered = [envelopes[0]!, envelopes[2]!, envelopes[1]!, envelopes[3]!];
    assert.match(verdictReason(await verifyChain(reordered, publicKey), 2), /seq is 3 where 2 was expected/);

    const renumbered = [envelopes[0]!, envelopes[1]!, { ...envelopes[3]!, seq: 3 }];
    assert.match(verdictReason(await verifyChain(renumbered, publicKey), 3), /prev is not the hash/);

    const cutAndResigned = [envelopes[0]!, envelopes[1]!, signEnvelope(privateKey, { ...envelopes[3]!, seq: 3 })];
    assert.match(verdictReason(await verifyChain(cutAndResigned, publicKey), 3), /prev is not the hash/);

    const other = privateKeyFromSeed(randomBytes(32).toString('hex'));
    assert.match(verdictReason(await verifyChain(envelopes, publicKeyHex(other)), 1), /signature/);

    assert.match(verdictReason(await verifyChain(envelopes, publicKey, 'f'.repeat(64)), 1), /not to the intent id/);
    assert.match(verdictReason(await verifyChain([], publicKey), 1), /no envelopes/);
  });

  it('refuses an envelope moved from another intent', async () => {
    const a = chain(['intent.created', 'intent.compiled']);
    const b = chain(['intent.created', 'intent.compiled']);
    // Same key, same bodies, but a's second envelope names a's id (and the times differ only in the first).
    const mixed = [{ ...b[0]!, body: { other: true } }, a[1]!];
    assert.equal((await verifyChain(mixed, publicKey)).ok, false);
  });
});

function pick(verdict: Awaited<ReturnType<typeof verifyChain>>) {
  return verdict.ok ? verdict : { ok: verdict.ok, seq: verdict.seq, reason: verdict.reason };
}

function verdictReason(verdict: Awaited<ReturnType<typeof verifyChain>>, seq: number): string {
  assert.equal(verdict.ok, false);
  if (verdict.ok) return '';
  assert.equal(verdict.seq, seq);
  return verdict.reason;
}
