import assert from 'node:assert/strict';
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { memoryOwnerTokens, OwnerTokens } from './owner-token.ts';

const root = 'root-memory-token-for-owner-tests';
const tokens = new OwnerTokens(root, memoryOwnerTokens);

describe('owner tokens', () => {
  it('are mem1.<owner>.<HMAC-SHA256 under HKDF(root)> and verify to their owner', () => {
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(root), Buffer.alloc(0), 'platform-memory-owner-token-v1', 32));
    const expected = `mem1.user.a-1.${createHmac('sha256', key).update('mem1.user.a-1').digest('base64url')}`;
    assert.equal(tokens.mint('user.a-1'), expected);
    assert.deepEqual(tokens.verify(expected), { ok: true, owner: 'user.a-1' });
  });

  it('one owner’s token names no other owner, and another root’s tokens do not verify', () => {
    const alice = tokens.mint('alice');
    assert.notEqual(alice, tokens.mint('bob'));
    const [, , mac] = alice.split('.');
    assert.deepEqual(tokens.verify(`mem1.bob.${mac}`), { ok: false, reason: 'the token’s MAC does not match' });
    assert.equal(new OwnerTokens(`${root}x`, memoryOwnerTokens).verify(alice).ok, false);
    assert.equal(new OwnerTokens(root, { prefix: 'mem1', info: 'another-purpose' }).verify(alice).ok, false, 'the HKDF info separates uses of one root');
  });

  it('refuses tampered, truncated, non-canonical and malformed tokens', () => {
    const token = tokens.mint('alice');
    const mac = token.slice(token.lastIndexOf('.') + 1);
    const flipped = `${mac.slice(0, -2)}${mac.at(-2) === 'A' ? 'B' : 'A'}${mac.at(-1)}`;
    // The last character carries two unused bits: a different letter decoding to the same bytes.
    const lastIndex = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(mac.at(-1) as string);
    const stray = `${mac.slice(0, -1)}${'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[lastIndex ^ 1]}`;
    for (const [presented, reason] of [
      [`mem1.alice.${flipped}`, 'the token’s MAC does not match'],
      [`mem1.alice.${stray}`, 'the token’s MAC is not base64url'],
      [`mem1.alice.${mac.slice(0, -1)}`, 'the token’s MAC is not base64url'],
      [`mem1.alice.${mac}=`, 'the token’s MAC is not base64url'],
      [`mem1..${mac}`, 'the token names no valid owner'],
      [`mem1.al ice.${mac}`, 'the token names no valid owner'],
      [`mem1.${'a'.repeat(129)}.${mac}`, 'the token names no valid owner'],
      [`mem2.alice.${mac}`, 'not a mem1 token'],
      [root, 'not a mem1 token'],
    ] as const)
      assert.deepEqual(tokens.verify(presented), { ok: false, reason }, presented);
  });

  it('mints only for valid owners and never from an empty root', () => {
    assert.throws(() => tokens.mint(''), /an owner is/);
    assert.throws(() => tokens.mint('a/b'), /an owner is/);
    assert.equal(tokens.verify(tokens.mint('a'.repeat(128))).ok, true);
    assert.throws(() => new OwnerTokens('', memoryOwnerTokens), /non-empty root/);
  });
});
