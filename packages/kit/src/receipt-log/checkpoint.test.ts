import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { privateKeyFromSeed } from '../auth/ed25519.ts';
import { openCheckpoint, signCheckpoint, verifierKey } from './checkpoint.ts';
import { rawPublicKey, signNote } from './signed-note.ts';

// RFC 8032 section 7.1 TEST 1 secret key; its public key is d75a9801…511a.
const seed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const origin = 'settlement.example/receipts';
const sequencer = { name: origin, privateKey: privateKeyFromSeed(seed) };
const vkey = verifierKey(origin, rawPublicKey(sequencer.privateKey));
// The root of Certificate Transparency's eight-leaf reference tree.
const root8 = Buffer.from('5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328', 'hex');

// Cross-checked once against an independent computation with Python's `cryptography` package.
const expectedNote =
  'settlement.example/receipts\n' +
  '8\n' +
  'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n' +
  '\n' +
  '\u2014 settlement.example/receipts 5CLPGIfkhLvtlLE8S9T8FzPQDqi4v26JqWqYJaQ77RrM/t8YDodEtxhV0yjTaLWyW94cIX4Hz8vUsI5GfzJIUyzvQwc=\n';
const note = signCheckpoint({ origin, treeSize: 8, rootHash: root8 }, sequencer);
const bodyLength = note.indexOf('\n\n') + 1;

/** The note with its single signature line's decoded bytes passed through `edit`. */
function withSignatureBytes(edit: (bytes: Buffer) => void): string {
  const [head, encoded] = [note.slice(0, note.lastIndexOf(' ') + 1), note.slice(note.lastIndexOf(' ') + 1, -1)];
  const bytes = Buffer.from(encoded, 'base64');
  edit(bytes);
  return `${head}${bytes.toString('base64')}\n`;
}

describe('checkpoint: format', () => {
  it('writes the exact C2SP text for a fixed key, origin, size and root', async () => {
    assert.equal(note, expectedNote);
  });

  it('publishes the verifier key <name>+<key ID>+<base64(0x01 || public key)>, key ID = SHA-256(name || 0x0A || 0x01 || key)[:4]', async () => {
    const publicKey = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
    const id = createHash('sha256')
      .update(Buffer.concat([Buffer.from(origin), Buffer.of(0x0a, 0x01), publicKey]))
      .digest()
      .subarray(0, 4);
    assert.equal(id.toString('hex'), 'e422cf18');
    assert.equal(vkey, `settlement.example/receipts+e422cf18+${Buffer.concat([Buffer.of(1), publicKey]).toString('base64')}`);
    // The signature line starts with the same key ID, big-endian.
    withSignatureBytes((bytes) => assert.equal(bytes.subarray(0, 4).toString('hex'), 'e422cf18'));
  });
});

describe('checkpoint: round trip', () => {
  it('opens what it signed, for the empty tree, one leaf and the largest safe size', async () => {
    assert.deepEqual(await openCheckpoint(note, vkey), { ok: true, origin, treeSize: 8, rootHash: new Uint8Array(root8) });
    for (const treeSize of [0, 1, Number.MAX_SAFE_INTEGER]) {
      const rootHash = createHash('sha256').update(String(treeSize)).digest();
      assert.deepEqual(await openCheckpoint(signCheckpoint({ origin, treeSize, rootHash }, sequencer), vkey), {
        ok: true,
        origin,
        treeSize,
        rootHash: new Uint8Array(rootHash),
      });
    }
  });

  it('opens a checkpoint that witnesses have cosigned, their lines before or after the log’s', async () => {
    const body = note.slice(0, bodyLength);
    const witnessLine = signNote(body, { name: 'witness.example/w1', privateKey: privateKeyFromSeed('2a'.repeat(32)) }).slice(bodyLength + 1);
    const ourLine = note.slice(bodyLength + 1);
    assert.equal((await openCheckpoint(`${body}\n${witnessLine}${ourLine}`, vkey)).ok, true);
    assert.equal((await openCheckpoint(`${body}\n${ourLine}${witnessLine}`, vkey)).ok, true);
  });
});

describe('checkpoint: tampering', () => {
  it('fails when any character of the body is changed', async () => {
    for (let i = 0; i < bodyLength; i++) {
      const tampered = `${note.slice(0, i)}${note[i] === 'A' ? 'B' : 'A'}${note.slice(i + 1)}`;
      // Changing the body's final newline also removes the blank line that ends the body.
      const reason = i === bodyLength - 1 ? 'malformed note' : 'bad signature';
      assert.deepEqual(await openCheckpoint(tampered, vkey), { ok: false, reason }, `body character ${i}`);
    }
  });

  it('fails when any bit of any signature byte is flipped: key ID bytes lose the key, signature bytes fail it', async () => {
    for (let i = 0; i < 68; i++) {
      for (const bit of [0x01, 0x80]) {
        const tampered = withSignatureBytes((bytes) => {
          bytes[i] = (bytes[i] as number) ^ bit;
        });
        const reason = i < 4 ? 'no signature by the verifier key' : 'bad signature';
        assert.deepEqual(await openCheckpoint(tampered, vkey), { ok: false, reason }, `signature byte ${i} bit ${bit}`);
      }
    }
  });

  it('fails when another key signed under the same name, and when it also copies our key ID', async () => {
    const impostor = { name: origin, privateKey: privateKeyFromSeed('1f'.repeat(32)) };
    const forged = signCheckpoint({ origin, treeSize: 8, rootHash: root8 }, impostor);
    assert.deepEqual(await openCheckpoint(forged, vkey), { ok: false, reason: 'no signature by the verifier key' });
    const ourKeyId = Buffer.from(note.slice(note.lastIndexOf(' ') + 1, -1), 'base64').subarray(0, 4);
    const encoded = forged.slice(forged.lastIndexOf(' ') + 1, -1);
    const withOurId = Buffer.concat([ourKeyId, Buffer.from(encoded, 'base64').subarray(4)]).toString('base64');
    assert.deepEqual(await openCheckpoint(`${forged.slice(0, forged.lastIndexOf(' ') + 1)}${withOurId}\n`, vkey), { ok: false, reason: 'bad signature' });
  });

  it('fails when the only signature line is for another name, even by the same key', async () => {
    const sameKeyOtherName = signCheckpoint({ origin, treeSize: 8, rootHash: root8 }, { name: 'other.example/log', privateKey: sequencer.privateKey });
    assert.deepEqual(await openCheckpoint(sameKeyOtherName, vkey), { ok: false, reason: 'no signature by the verifier key' });
    assert.deepEqual(await openCheckpoint(note.replace(`\u2014 ${origin} `, '\u2014 other.example/log '), vkey), {
      ok: false,
      reason: 'no signature by the verifier key',
    });
  });
});

describe('checkpoint: strict parsing', () => {
  const signedBody = (body: string): string => signNote(body, sequencer);
  const rootText = root8.toString('base64');

  it('refuses a note without its final newline or without the blank line', async () => {
    assert.deepEqual(await openCheckpoint(note.slice(0, -1), vkey), { ok: false, reason: 'malformed note' });
    assert.deepEqual(await openCheckpoint(note.replace('\n\n', '\n'), vkey), { ok: false, reason: 'malformed note' });
    assert.deepEqual(await openCheckpoint(note, 'not a key'), { ok: false, reason: 'malformed verifier key' });
  });

  it('refuses extension lines, missing lines, empty lines and an empty origin, even when validly signed', async () => {
    const cases: [string, string][] = [
      [`${origin}\n8\n${rootText}\nextension\n`, 'extension lines are not accepted'],
      [`${origin}\n8\n`, 'malformed checkpoint'],
      [`${origin}\n8\n\n${rootText}\n`, 'malformed checkpoint'],
      [`\n8\n${rootText}\n`, 'malformed checkpoint'],
      [`${origin}\n8\n${rootText}\n\n`, 'malformed checkpoint'],
    ];
    for (const [body, reason] of cases) assert.deepEqual(await openCheckpoint(signedBody(body), vkey), { ok: false, reason }, JSON.stringify(body));
  });

  it('refuses a tree size that is not plain decimal without leading zeroes, or that exceeds 2^53 - 1', async () => {
    for (const size of ['08', '00', '-1', '+8', '8.0', '1e3', ' 8', '8 ', '0x8', '٨', '9007199254740992', '99999999999999999999']) {
      assert.deepEqual(await openCheckpoint(signedBody(`${origin}\n${size}\n${rootText}\n`), vkey), { ok: false, reason: 'malformed tree size' }, size);
    }
  });

  it('refuses a root hash that is not canonical standard base64 of exactly 32 bytes', async () => {
    const stray = `${rootText.slice(0, 42)}h=`; // same bytes as …g= with a stray low bit
    assert.equal(Buffer.from(stray, 'base64').equals(root8), true);
    for (const bad of [
      stray,
      rootText.slice(0, -1),
      root8.subarray(1).toString('base64'),
      Buffer.concat([root8, root8]).toString('base64'),
      root8.toString('base64url'),
    ]) {
      assert.deepEqual(await openCheckpoint(signedBody(`${origin}\n8\n${bad}\n`), vkey), { ok: false, reason: 'malformed root hash' }, bad);
    }
  });

  it('refuses to sign an empty or multi-line origin, a size that is not a non-negative safe integer, or a root that is not 32 bytes', async () => {
    assert.throws(() => signCheckpoint({ origin: '', treeSize: 1, rootHash: root8 }, sequencer), /origin/);
    assert.throws(() => signCheckpoint({ origin: 'a\nb', treeSize: 1, rootHash: root8 }, sequencer), /origin/);
    for (const treeSize of [-1, 1.5, Number.NaN, 2 ** 53]) assert.throws(() => signCheckpoint({ origin, treeSize, rootHash: root8 }, sequencer), /tree size/);
    assert.throws(() => signCheckpoint({ origin, treeSize: 1, rootHash: root8.subarray(1) }, sequencer), /32 bytes/);
  });
});
