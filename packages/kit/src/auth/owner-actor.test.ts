import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceError } from '../errors.ts';
import { actorOwners, anyActor, mayActAs, requireMayActAs } from './owner-actor.ts';
import { contractOwnerTokens, gatewayOwnerTokens } from './owner-token.ts';

const uuid = '8f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';

describe('acting as a DID behind an owner token', () => {
  it('the root token and an open service act as anyone, wallets and other methods included', () => {
    for (const owner of [anyActor, null]) {
      assert.ok(mayActAs(owner, 'did:platform:bob:0123456789abcdef'));
      assert.ok(mayActAs(owner, `0x${'ab'.repeat(20)}`));
    }
  });

  it('an owner acts only as platform DIDs of its own user id, in any spelling of a UUID label', () => {
    assert.ok(mayActAs('alice', 'did:platform:alice:0123456789abcdef'));
    assert.ok(mayActAs(uuid, `did:platform:${uuid.toUpperCase()}:0123456789ABCDEF`));
    assert.ok(mayActAs(uuid.toUpperCase(), `did:platform:${uuid}:0123456789abcdef`));
    for (const did of [
      'did:platform:bob:0123456789abcdef',
      'did:platform:alice2:0123456789abcdef',
      'did:platform:Alice:0123456789abcdef',
      'did:key:alice',
      `0x${'ab'.repeat(20)}`,
      'did:platform:alice:0123',
    ])
      assert.equal(mayActAs('alice', did), false, did);
  });

  it('refuses with 403 forbidden naming where the DID came from', () => {
    assert.throws(
      () => requireMayActAs('alice', 'did:platform:bob:0123456789abcdef', 'X-Platform-Actor-DID'),
      (error: unknown) => error instanceof ServiceError && error.status === 403 && error.code === 'forbidden' && /X-Platform-Actor-DID/.test(error.message),
    );
  });

  it('an open service has no owner tokens; one scheme’s token does not verify under another', () => {
    assert.equal(actorOwners('', contractOwnerTokens), undefined);
    const contracts = actorOwners('root', contractOwnerTokens);
    const gateway = actorOwners('root', gatewayOwnerTokens);
    const token = contracts?.tokens.mint('alice') as string;
    assert.deepEqual(contracts?.tokens.verify(token), { ok: true, owner: 'alice' });
    assert.equal(gateway?.tokens.verify(`gw1${token.slice(4)}`).ok, false);
  });
});
