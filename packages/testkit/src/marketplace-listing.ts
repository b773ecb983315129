import { createServer } from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Arrivals, listenOnFreePort } from './local-server.ts';

/** One call a provider received from the marketplace: its operation and arguments. */
export interface ProviderCall {
  operation: string;
  args: Record<string, unknown>;
}

/**
 * A provider speaking the marketplace's protocol: `/translate` answers `{result: {text: "bonjour …"}, units: 1}`. It
 * records each call, so a test sees that the provider was called (and with what).
 *
 * @example const provider = await startTranslator(); const id = await publishListing(marketUrl, provider.url)
 */
export async function startTranslator() {
  const arrivals = new Arrivals<ProviderCall>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { operation?: string; args: { text?: string } };
      arrivals.push({ operation: body.operation ?? (request.url ?? '').replace(/^\//, ''), args: body.args });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ result: { text: `bonjour ${body.args.text ?? ''}`.trim() }, units: 1 }));
    });
  });
  const listening = await listenOnFreePort(server);
  return { url: `http://127.0.0.1:${listening.port}`, calls: arrivals.received, close: listening.close };
}

/** The translator's manifest: one operation, `translate`, at 0.01 per call. */
export function translatorManifest(endpoint: string) {
  return {
    version: 1,
    display_name: 'French translator',
    summary: 'Translates a short text into French',
    kind: 'api',
    endpoint,
    timeout_ms: 5_000,
    confidential: false,
    tags: ['translation', 'french'],
    operations: [
      {
        name: 'translate',
        description: 'Translate the text',
        input_schema: { type: 'object', properties: { text: { type: 'string' } } },
        output_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        pricing: { unit: 'call', price_per_unit: '0.010000', max_units: 1 },
      },
    ],
  };
}

/**
 * A developer signs in with Ethereum (a new key) and publishes the translator's listing through the marketplace's
 * own API (registered on chain when the marketplace has one). Resolves with the service id and its payout DID.
 */
export async function publishListing(marketUrl: string, endpoint: string, options: { payoutDid?: string } = {}): Promise<string> {
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${marketUrl}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const answer = (await response.json()) as { ok: boolean; data: Record<string, string> };
    if (!answer.ok) throw new Error(`${method} ${path}: ${JSON.stringify(answer)}`);
    return answer.data;
  };
  const developer = privateKeyToAccount(generatePrivateKey());
  const { message } = await call('POST', '/v1/developers/nonce', { address: developer.address });
  const { token } = await call('POST', '/v1/developers/auth', { message, signature: await developer.signMessage({ message: message as string }) });
  const headers = { 'x-developer-token': token as string };
  const draft = await call(
    'POST',
    '/v1/services',
    { manifest: translatorManifest(endpoint), ...(options.payoutDid ? { payout_did: options.payoutDid } : {}) },
    headers,
  );
  await call('POST', `/v1/services/${draft.id}/publish`, {}, headers);
  return draft.id as string;
}
