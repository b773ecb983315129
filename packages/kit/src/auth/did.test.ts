import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { didFor, ownerFromLabel, parseDid } from './did.ts';

const uuid = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const fp = '0123456789abcdef';

describe('parseDid on valid DIDs', () => {
  it('parses a DID with a UUID label into its parts', () => {
    const did = `did:platform:${uuid}:${fp}`;
    assert.deepEqual(parseDid(did), { did, label: uuid, owner: uuid, keyFingerprint: fp });
  });

  it('lowercases an uppercase UUID label as the owner but keeps the raw label', () => {
    const upper = uuid.toUpperCase();
    const parsed = parseDid(`did:platform:${upper}:${fp}`);
    assert.equal(parsed?.label, upper);
    assert.equal(parsed?.owner, uuid);
  });

  it('keeps a non-UUID label as the owner exactly, case included', () => {
    const parsed = parseDid(`did:platform:Alice-Bot:${fp}`);
    assert.equal(parsed?.label, 'Alice-Bot');
    assert.equal(parsed?.owner, 'Alice-Bot');
  });

  it('accepts an uppercase hex fingerprint and keeps it as given', () => {
    assert.equal(parseDid(`did:platform:alice:${fp.toUpperCase()}`)?.keyFingerprint, fp.toUpperCase());
  });
});

describe('parseDid on malformed DIDs', () => {
  const cases: Array<[string, string]> = [
    ['wrong method', `did:other:${uuid}:${fp}`],
    ['missing did: prefix', `platform:${uuid}:${fp}`],
    ['leading whitespace', ` did:platform:alice:${fp}`],
    ['15 hex characters', `did:platform:alice:${fp.slice(0, 15)}`],
    ['17 hex characters', `did:platform:alice:${fp}0`],
    ['non-hex fingerprint', 'did:platform:alice:0123456789abcdeg'],
    ['empty label', `did:platform::${fp}`],
    ['extra colon in the label', `did:platform:ali:ce:${fp}`],
    ['trailing colon', `did:platform:alice:${fp}:`],
    ['no fingerprint', 'did:platform:alice'],
    ['empty string', ''],
  ];
  for (const [name, did] of cases) {
    it(`returns undefined for ${name}`, () => {
      assert.equal(parseDid(did), undefined);
    });
  }
});

describe('ownerFromLabel and didFor', () => {
  it('lowercases UUIDs only', () => {
    assert.equal(ownerFromLabel('0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B'), uuid);
    assert.equal(ownerFromLabel('ABC'), 'ABC');
    assert.equal(ownerFromLabel('0190A1B2C3D47E5F8A9B0C1D2E3F4A5B'), '0190A1B2C3D47E5F8A9B0C1D2E3F4A5B');
  });

  it('builds a DID from the first 16 hex characters of the public key, which parses back', () => {
    const publicHex = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
    const did = didFor(uuid, publicHex);
    assert.equal(did, `did:platform:${uuid}:d75a980182b10ab7`);
    assert.equal(parseDid(did)?.keyFingerprint, 'd75a980182b10ab7');
  });
});
