import { randomBytes } from 'node:crypto';
import type { PrivateKeyAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signWalletRequest } from '../src/developers/wallet-request.ts';
import type { Manifest, ManifestOperation } from '../src/listings/manifest-types.ts';
import type { Marketplace } from './harness.ts';

/*
 * Developers and listings through the API, for any marketplace test: sign a viem test account in, create and
 * publish a listing from a manifest.
 */

export interface Developer {
  account: PrivateKeyAccount;
  address: string;
  token: string;
  /** `{ 'x-developer-token': token }`, to spread into a call's headers. */
  headers: Record<string, string>;
}

export const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** An operation priced per call; override anything. */
export function testOperation(overrides: Partial<ManifestOperation> = {}): ManifestOperation {
  return {
    name: 'run',
    description: 'Runs the thing',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
    output_schema: { type: 'object' },
    pricing: { unit: 'call', price_per_unit: '0.002', max_units: 1 },
    ...overrides,
  };
}

/** A valid manifest (https endpoint, one operation); override anything. */
export function testManifest(overrides: Partial<Manifest> = {}): Manifest {
  return {
    version: 1,
    display_name: 'Weather Now',
    summary: 'Current weather for a city',
    kind: 'api',
    endpoint: 'https://weather.example.com',
    timeout_ms: 5_000,
    confidential: false,
    tags: ['weather'],
    operations: [testOperation()],
    ...overrides,
  };
}

/** The EIP-4361 sign-in message for `account`, on a fresh nonce. */
export async function signInMessage(market: Marketplace, account: PrivateKeyAccount): Promise<string> {
  const nonce = await market.call('POST', '/v1/developers/nonce', { body: { address: account.address } });
  if (nonce.status !== 200) throw new Error(`nonce failed: ${JSON.stringify(nonce.body)}`);
  return nonce.body.data.message as string;
}

/** Signs a viem account in (a new one by default) and returns its X-Developer-Token. */
export async function signIn(market: Marketplace, account: PrivateKeyAccount = newAccount()): Promise<Developer> {
  const message = await signInMessage(market, account);
  const auth = await market.call('POST', '/v1/developers/auth', { body: { message, signature: await account.signMessage({ message }) } });
  if (auth.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(auth.body)}`);
  const token = auth.body.data.token as string;
  return { account, address: account.address, token, headers: { 'x-developer-token': token } };
}

/** Headers of a request signed with `Authorization: Wallet` at the marketplace's clock time, with a fresh nonce. */
export async function walletHeaders(
  market: Marketplace,
  account: PrivateKeyAccount,
  request: { method: string; url: string; body?: string },
  overrides: { timestamp?: number; nonce?: string } = {},
): Promise<Record<string, string>> {
  const headers = await signWalletRequest(account, {
    method: request.method,
    pathWithQuery: request.url,
    body: request.body,
    timestamp: overrides.timestamp ?? Math.floor(market.clock.now().getTime() / 1000),
    nonce: overrides.nonce ?? randomBytes(16).toString('base64url'),
  });
  return request.body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
}

/** Creates a draft listing; throws unless 201. */
export async function createListing(market: Marketplace, developer: Developer, body: { manifest?: Manifest; slug?: string; payout_did?: string } = {}) {
  const created = await market.call('POST', '/v1/services', { headers: developer.headers, body: { manifest: testManifest(), ...body } });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  return created.body.data;
}

/** Creates and publishes a listing; returns the published listing view. */
export async function publishListing(market: Marketplace, developer: Developer, body: { manifest?: Manifest; slug?: string; payout_did?: string } = {}) {
  const draft = await createListing(market, developer, body);
  const published = await market.call('POST', `/v1/services/${draft.id}/publish`, { headers: developer.headers });
  if (published.status !== 200) throw new Error(`publish failed: ${JSON.stringify(published.body)}`);
  return published.body.data;
}
