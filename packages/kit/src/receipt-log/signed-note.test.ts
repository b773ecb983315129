import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { privateKeyFromSeed } from '../auth/ed25519.ts';
import { decodeCanonicalBase64, isValidKeyName, keyId, openNote, parseVerifierKey, rawPublicKey, signNote, verifierKey } from './signed-note.ts';

// The example of golang.org/x/mod/sumdb/note, the reference implementation of the format (used as data only).
const goSeedHex = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1).toString('hex');
const goVkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const goText = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const goNote = `${goText}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

const go = { name: 'PeterNeumann', privateKey: privateKeyFromSeed(goSeedHex) };
const witness = { name: 'witness.example/w1', privateKey: privateKeyFromSeed('2a'.repeat(32)) };

/** The signature line(s) of a note signed by `signer` over `text`. */
const signatureLines = (text: string, signer: typeof go): string => signNote(text, signer).slice(text.length + 1);

describe('signed-note: the Go sumdb/note known answer', () => {
  it('derives the published verifier key and key ID from the published private key', async () => {
    const raw = rawPublicKey(go.privateKey);
    assert.equal(verifierKey('PeterNeumann', raw), goVkey);
    assert.equal(keyId('PeterNeumann', raw).toString('hex'), 'c74f20a3');
  });

  it('computes the key ID as SHA-256(name || 0x0A || 0x01 || public key)[:4]', async () => {
    const raw = rawPublicKey(witness.privateKey);
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from('witness.example/w1'), Buffer.of(0x0a, 0x01), raw]))
      .digest()
      .subarray(0, 4);
    assert.equal(keyId('witness.example/w1', raw).toString('hex'), expected.toString('hex'));
    assert.notEqual(keyId('witness.example/w2', raw).toString('hex'), expected.toString('hex'));
  });

  it('reproduces the published signed note byte for byte, and opens it', async () => {
    assert.equal(signNote(goText, go), goNote);
    assert.deepEqual(await openNote(goNote, goVkey), { ok: true, text: goText });
  });
});

describe('signed-note: verifier keys', () => {
  it('parses a key it formatted, and refuses every malformed variant', async () => {
    const parsed = await parseVerifierKey(goVkey);
    assert.ok(parsed.ok);
    assert.equal(parsed.key.name, 'PeterNeumann');
    assert.equal(Buffer.from(parsed.key.keyId).toString('hex'), 'c74f20a3');
    const keyText = goVkey.slice('PeterNeumann+c74f20a3+'.length);
    const keyBytes = Buffer.from(keyText, 'base64');
    assert.equal(Buffer.from(parsed.key.publicKey).toString('hex'), keyBytes.subarray(1).toString('hex'));
    const id = 'c74f20a3';
    for (const bad of [
      '',
      'PeterNeumann',
      `PeterNeumann+${id}`,
      `PeterNeumann+c74f20a4+${keyText}`, // key ID that does not match
      `PeterNeumann+C74F20A3+${keyText}`, // uppercase hex is not what anyone emits
      `PeterNeumann+c74f20a+${keyText}`,
      `Peter Neumann+${id}+${keyText}`,
      `+${id}+${keyText}`,
      `PeterNeumann+${id}+${Buffer.concat([Buffer.of(0x02), keyBytes.subarray(1)]).toString('base64')}`, // not ed25519
      `PeterNeumann+${id}+${keyBytes.subarray(0, 32).toString('base64')}`,
      `PeterNeumann+${id}+${keyText.slice(0, -1)}`,
      `PeterNeumann+${id}+${keyText.replace('/', '_')}`,
    ]) {
      assert.deepEqual(await parseVerifierKey(bad), { ok: false, reason: 'malformed verifier key' }, bad);
    }
  });

  it('refuses to format a key with an invalid name or a key of the wrong length', async () => {
    const raw = rawPublicKey(go.privateKey);
    for (const name of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b', 'a\u0085b', 'a\u2003b', '\ud800']) {
      assert.equal(isValidKeyName(name), false, JSON.stringify(name));
      assert.throws(() => verifierKey(name, raw), /invalid note key name/);
    }
    assert.equal(isValidKeyName('example.com/log—42'), true);
    assert.throws(() => verifierKey('PeterNeumann', raw.subarray(1)), /32 bytes/);
  });
});

describe('signed-note: opening', () => {
  it('ignores signatures by other keys, before or after the verifier’s own, so witnesses can cosign', async () => {
    const ours = signatureLines(goText, go);
    const theirs = signatureLines(goText, witness);
    assert.deepEqual(await openNote(`${goText}\n${theirs}${ours}`, goVkey), { ok: true, text: goText });
    assert.deepEqual(await openNote(`${goText}\n${ours}${theirs}`, goVkey), { ok: true, text: goText });
    assert.deepEqual(await openNote(`${goText}\n${theirs}`, goVkey), { ok: false, reason: 'no signature by the verifier key' });
  });

  it('rejects the whole note when any line with the verifier’s name and key ID fails, even beside a good one', async () => {
    const ours = signatureLines(goText, go);
    const forged = signatureLines('another text\n', go);
    assert.deepEqual(await openNote(`${goText}\n${ours}${forged}`, goVkey), { ok: false, reason: 'bad signature' });
    assert.deepEqual(await openNote(`${goText}\n${forged}${ours}`, goVkey), { ok: false, reason: 'bad signature' });
  });

  it('keeps blank lines inside the text: the text ends at the last blank line', async () => {
    const text = 'first\n\nsecond\n\n';
    assert.deepEqual(await openNote(signNote(text, go), goVkey), { ok: true, text });
  });

  it('refuses malformed framing and signature lines', async () => {
    const ours = signatureLines(goText, go);
    const cases: [string, string][] = [
      [goNote.slice(0, -1), 'malformed note'], // no final newline
      [`${goText}${ours}`, 'malformed note'], // no blank line
      [`${goText}\n`, 'malformed signature line'], // no signature at all
      [goNote.replace('\n', '\r\n'), 'malformed note'], // control character
      [`${goText}\n${ours.replace('—', '-')}`, 'malformed signature line'],
      [`${goText}\n${ours.replace('— ', '—')}`, 'malformed signature line'],
      [`${goText}\n${ours.replace(' x08', '  x08')}`, 'malformed signature line'],
      [`${goText}\n${ours.replace('=\n', '\n')}`, 'malformed signature line'], // padding missing
      [`${goText}\n${ours.replace('AM=', 'AN=')}`, 'malformed signature line'], // stray low bits
      [`${goText}\n${ours.replace('x08go', 'x08g-')}`, 'malformed signature line'],
      [`${goText}\n— PeterNeumann x08gow==\n`, 'malformed signature line'], // the key ID alone, no signature
      [`${goText}\n${ours} \n`, 'malformed signature line'],
    ];
    for (const [note, reason] of cases) assert.deepEqual(await openNote(note, goVkey), { ok: false, reason }, JSON.stringify(note));
  });

  it('accepts 100 signature lines and refuses 101', async () => {
    const others = Array.from({ length: 99 }, (_, i) => `— other.example/${i} ${Buffer.alloc(68, i).toString('base64')}\n`).join('');
    const ours = signatureLines(goText, go);
    assert.deepEqual(await openNote(`${goText}\n${others}${ours}`, goVkey), { ok: true, text: goText });
    assert.deepEqual(await openNote(`${goText}\n${others}${ours}${ours}`, goVkey), { ok: false, reason: 'too many signatures' });
  });

  it('refuses to sign a text without a final newline, with control characters, or with a non-ed25519 key', async () => {
    assert.throws(() => signNote('no newline', go), /end in a newline/);
    assert.throws(() => signNote('tab\there\n', go), /control characters/);
    assert.throws(() => signNote('ok\n', { name: 'a b', privateKey: go.privateKey }), /invalid note key name/);
    const { privateKey: ecKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    assert.throws(() => signNote('ok\n', { name: 'ec', privateKey: ecKey }), /ed25519 private key/);
  });

  it('decodes only canonical standard base64', async () => {
    assert.deepEqual(decodeCanonicalBase64('AAEC'), Uint8Array.of(0, 1, 2));
    assert.equal(decodeCanonicalBase64('')?.length, 0);
    for (const bad of ['AAE', 'AAE=A', 'AB==', 'AA-_', 'AA\nEC', 'AAEC====']) assert.equal(decodeCanonicalBase64(bad), undefined, bad);
  });
});
