import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { privateKeyFromSeed, publicKeyHex, signMessage } from './ed25519.ts';
import { Ed25519Worker } from './ed25519-worker.ts';

// RFC 8032 section 7.1, TEST 1.
const rfcSeed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const rfcPublic = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const rfcSignature = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

describe('ed25519 on a worker thread', () => {
  const worker = new Ed25519Worker({ signingSeedHex: rfcSeed });
  after(() => worker.close());

  it('makes the published signature and the same signatures as inline signing', async () => {
    assert.equal(await worker.sign(''), rfcSignature);
    const key = privateKeyFromSeed(rfcSeed);
    assert.equal(publicKeyHex(key), rfcPublic);
    assert.equal(await worker.sign('platform-marketplace-call-v1\nabc'), signMessage(key, 'platform-marketplace-call-v1\nabc'));
  });

  it('accepts a good signature and refuses another message, another key and malformed input', async () => {
    assert.equal(await worker.verify(rfcPublic, '', rfcSignature), true);
    assert.equal(await worker.verify(rfcPublic, 'x', rfcSignature), false);
    assert.equal(await worker.verify('11'.repeat(32), '', rfcSignature), false);
    assert.equal(await worker.verify(rfcPublic, '', 'zz'), false);
    assert.equal(await worker.verify('not hex', '', rfcSignature), false);
  });

  it('answers every one of many jobs sent in one turn, each its own answer', async () => {
    const messages = Array.from({ length: 200 }, (_, i) => `message ${i}`);
    const signatures = await Promise.all(messages.map((message) => worker.sign(message)));
    const checks = await Promise.all(messages.map((message, i) => worker.verify(rfcPublic, message, signatures[(i + 1) % 200] as string)));
    assert.deepEqual(
      checks,
      messages.map(() => false),
      'each signature checked against its neighbour’s message',
    );
    const own = await Promise.all(messages.map((message, i) => worker.verify(rfcPublic, message, signatures[i] as string)));
    assert.ok(own.every(Boolean));
  });

  it('without a signing key, signing fails; once closed, every job fails', async () => {
    const verifier = new Ed25519Worker();
    await assert.rejects(verifier.sign('x'), /no signing key/);
    assert.equal(await verifier.verify(rfcPublic, '', rfcSignature), true);
    await verifier.close();
    await assert.rejects(verifier.verify(rfcPublic, '', rfcSignature), /exited/);
  });
});
