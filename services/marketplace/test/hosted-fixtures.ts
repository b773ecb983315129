import { createServer } from 'node:http';
import { listenOnFreePort } from '@platform/testkit/local-server';
import type { Manifest, ManifestOperation } from '../src/listings/manifest-types.ts';
import type { Marketplace } from './harness.ts';

/** A multipart upload as `curl -F` sends it: the metadata part and one part per module, each named by its path. */
export async function uploadBody(metadata: unknown, modules: Record<string, string | Uint8Array>) {
  const form = new FormData();
  form.set('metadata', new Blob([JSON.stringify(metadata)], { type: 'application/json' }));
  for (const [name, content] of Object.entries(modules))
    form.set(name, new Blob([content], { type: name.endsWith('.wasm') ? 'application/wasm' : 'application/javascript+module' }), name);
  const request = new Request('http://upload.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') as string };
}

export async function upload(
  market: Marketplace,
  headers: Record<string, string>,
  serviceId: string,
  metadata: unknown,
  modules: Record<string, string | Uint8Array>,
) {
  const { body, contentType } = await uploadBody(metadata, modules);
  return market.call('POST', `/v1/services/${serviceId}/artifacts`, { headers: { ...headers, 'content-type': contentType }, body });
}

/**
 * The test Worker: answers the provider protocol. `echo` returns its args and the VERSION binding, `throw` throws,
 * `fetch` fetches args.url, `secret` uses (and prints) the API_KEY secret, `slow` answers after 30 s (past its 300 ms).
 */
export const workerModules = {
  'main.js': `import { greet } from './lib/greet.js';
console.log('modules loaded');
export default {
  async fetch(request, env) {
    const call = await request.json();
    console.info('serving', call.operation);
    if (call.operation === 'throw') throw new Error('the worker fell over');
    if (call.operation === 'slow') await new Promise((resolve) => setTimeout(resolve, 30_000));
    if (call.operation === 'fetch') {
      const answer = await fetch(call.args.url);
      return Response.json({ result: { status: answer.status, text: await answer.text() }, units: 1 });
    }
    if (call.operation === 'secret') {
      console.log('the key is', env.API_KEY);
      return Response.json({ result: { key_length: env.API_KEY.length, greeting: greet(env.GREETING) }, units: 1 });
    }
    return Response.json({ result: { echo: call.args, version: env.VERSION ?? 'none' }, units: 1 });
  },
};
`,
  'lib/greet.js': `export const greet = (name) => 'hello ' + name;\n`,
};

const operation = (name: string): ManifestOperation => ({
  name,
  description: `${name} in a hosted worker`,
  input_schema: { type: 'object' },
  output_schema: { type: 'object' },
  pricing: { unit: 'call', price_per_unit: '0.001000', max_units: 1 },
});

/** A hosted listing's manifest: no endpoint. */
export function hostedManifest(): Manifest {
  return {
    version: 1,
    display_name: 'Hosted echo',
    summary: 'A worker the marketplace runs',
    kind: 'api',
    timeout_ms: 5_000,
    confidential: false,
    tags: ['hosted'],
    operations: [...['echo', 'throw', 'fetch', 'secret'].map(operation), { ...operation('slow'), timeout_ms: 300 }],
  };
}

/** A server a worker may or may not reach: answers `hello from origin`. */
export async function startOrigin() {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('hello from origin');
  });
  const listening = await listenOnFreePort(server);
  return { port: listening.port, close: listening.close };
}
