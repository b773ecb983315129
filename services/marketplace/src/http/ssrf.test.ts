import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createJsonClient, JsonClientError } from '@platform/kit/http/json-client';
import { guardedClient, guardedLookup, isPrivateAddress } from './ssrf.ts';

test('private, loopback, link-local, CGNAT and unique-local addresses are private; public ones are not', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fc00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
  ])
    assert.equal(isPrivateAddress(address), true, address);
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111']) assert.equal(isPrivateAddress(address), false, address);
});

test('the guarded client refuses a private IP literal and a name resolving to one, unless allowed', async () => {
  const client = createJsonClient({ maxSockets: 2, timeoutMs: 2_000, lookup: guardedLookup(false) });
  const guarded = guardedClient(client, false);
  await assert.rejects(
    guarded.request('GET', 'http://127.0.0.1:9/x'),
    (error: unknown) => error instanceof JsonClientError && /private address/.test(error.message),
  );
  await assert.rejects(
    guarded.request('GET', 'http://[::1]:9/x'),
    (error: unknown) => error instanceof JsonClientError && /private address/.test(error.message),
  );
  await assert.rejects(
    guarded.request('GET', 'http://localhost:9/x'),
    (error: unknown) => error instanceof JsonClientError && /private address/.test(error.message),
  );
  assert.equal(guardedClient(client, true), client, 'allowed: the client as it is');
  await client.close();
});
