import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnFreePort } from './local-server.ts';
import { startWorkerd } from './workerd-process.ts';

/** A script as the stand-in keeps it: what the upload's metadata and parts said. */
export interface StandInScript {
  name: string;
  mainModule: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  bindings: Array<{ type: string; name: string; text: string }>;
  modules: string[];
}

/*
 * The operator's side of Workers for Platforms, as a Worker in a real workerd: a dispatch Worker that takes
 * `<script>/<path>` with the operator's bearer, runs the script (Worker Loader: an isolate per script) with an
 * outbound Worker given the allowlist of the call's `X-Platform-Egress` header, which refuses any other host with 403
 * and `X-Platform-Egress-Refused`. Scripts reach it from the API stand-in over a token-protected route of its own.
 */
const dispatchWorker = `
import { WorkerEntrypoint } from 'cloudflare:workers';
const scripts = new Map();
export class Outbound extends WorkerEntrypoint {
  async fetch(request) {
    const host = new URL(request.url).hostname.toLowerCase();
    const ok = this.ctx.props.allowlist.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
    if (!ok) return new Response('egress refused', { status: 403, headers: { 'x-platform-egress-refused': host } });
    return fetch(request);
  }
}
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const [, first, ...rest] = url.pathname.split('/');
    if (first === '_standin') {
      if (request.headers.get('x-standin-token') !== env.STANDIN_TOKEN) return new Response('no', { status: 401 });
      if (request.method === 'PUT') scripts.set(rest[0], await request.json());
      else scripts.delete(rest[0]);
      return new Response('ok');
    }
    if (request.headers.get('authorization') !== 'Bearer ' + env.DISPATCH_TOKEN) return new Response('dispatch token refused', { status: 401 });
    const script = scripts.get(first);
    if (!script) return new Response('no such script', { status: 404 });
    const allowlist = JSON.parse(request.headers.get('x-platform-egress') ?? '[]');
    const headers = new Headers(request.headers);
    headers.delete('authorization');
    headers.delete('x-platform-egress');
    const worker = env.LOADER.get(first + ':' + script.version, () => ({
      compatibilityDate: script.compatibilityDate,
      compatibilityFlags: script.compatibilityFlags,
      mainModule: script.mainModule,
      modules: Object.fromEntries(Object.entries(script.modules).map(([name, module]) =>
        [name, module.wasm ? { wasm: Uint8Array.from(atob(module.wasm), (c) => c.charCodeAt(0)) } : module.js])),
      env: script.env,
      globalOutbound: ctx.exports.Outbound({ props: { allowlist } }),
    }));
    const forwarded = new Request('https://dispatch.standin/' + rest.join('/') + url.search, {
      method: request.method,
      headers,
      body: request.method === 'GET' ? undefined : request.body,
    });
    return worker.getEntrypoint().fetch(forwarded);
  },
};
`;

/**
 * A local stand-in of the Cloudflare API routes the marketplace's Workers for Platforms runner uses (script upload
 * into a dispatch namespace, `PUT` multipart with a `metadata` part; delete), in the API's shapes (`{success, errors,
 * messages, result}`, 403 for a wrong token, 10007 for an unknown script), whose uploaded scripts run in a real
 * workerd behind a dispatch Worker (`dispatchUrl`), so the calls that follow are real.
 *
 * @example const cloudflare = await startCloudflareStandIn(); ...; await cloudflare.close()
 */
export async function startCloudflareStandIn(options: { accountId?: string; namespace?: string; apiToken?: string; dispatchToken?: string } = {}) {
  const accountId = options.accountId ?? 'standin-account';
  const namespace = options.namespace ?? 'standin-namespace';
  const apiToken = options.apiToken ?? randomBytes(16).toString('hex');
  const dispatchToken = options.dispatchToken ?? randomBytes(16).toString('hex');
  const internalToken = randomBytes(16).toString('hex');
  const workerd = await startWorkerd(
    { 'dispatch.js': dispatchWorker },
    (port) => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "dispatch", worker = .dispatch), (name = "internet", network = (allow = ["public", "private", "local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "dispatch") ],
);
const dispatch :Workerd.Worker = (
  modules = [ (name = "dispatch.js", esModule = embed "dispatch.js") ],
  compatibilityDate = "2026-11-17",
  bindings = [
    (name = "LOADER", workerLoader = ()),
    (name = "DISPATCH_TOKEN", fromEnvironment = "STANDIN_DISPATCH_TOKEN"),
    (name = "STANDIN_TOKEN", fromEnvironment = "STANDIN_INTERNAL_TOKEN"),
  ],
  globalOutbound = "internet",
);
`,
    { STANDIN_DISPATCH_TOKEN: dispatchToken, STANDIN_INTERNAL_TOKEN: internalToken },
  );
  const dispatchUrl = workerd.url;
  const internal = (method: string, name: string, body?: unknown) =>
    fetch(`${dispatchUrl}/_standin/${name}`, {
      method,
      headers: { 'x-standin-token': internalToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const scripts = new Map<string, StandInScript>();
  /** Every API request, `METHOD path`, in order. */
  const requests: string[] = [];
  let version = 0;
  const scriptPath = new RegExp(`^/client/v4/accounts/${accountId}/workers/dispatch/namespaces/${namespace}/scripts/([a-z0-9-]{1,63})$`);
  const answer = (response: ServerResponse, status: number, body: Record<string, unknown>) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ success: status < 300, errors: [], messages: [], result: null, ...body }));
  };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    requests.push(`${request.method} ${request.url}`);
    if (request.headers.authorization !== `Bearer ${apiToken}`) return answer(response, 403, { errors: [{ code: 10000, message: 'Authentication error' }] });
    const name = scriptPath.exec(request.url ?? '')?.[1];
    if (!name) return answer(response, 404, { errors: [{ code: 7003, message: 'Could not route to the requested URL' }] });
    if (request.method === 'DELETE') {
      if (!scripts.delete(name)) return answer(response, 404, { errors: [{ code: 10007, message: 'workers.api.error.script_not_found' }] });
      await internal('DELETE', name);
      return answer(response, 200, {});
    }
    if (request.method !== 'PUT') return answer(response, 405, { errors: [{ code: 10000, message: 'method not allowed' }] });
    let form: FormData;
    try {
      form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData();
    } catch {
      return answer(response, 400, { errors: [{ code: 10021, message: 'could not parse the multipart upload' }] });
    }
    const metadataPart = form.get('metadata');
    const metadata = JSON.parse(typeof metadataPart === 'string' ? metadataPart : await (metadataPart as Blob).text()) as {
      main_module?: string;
      compatibility_date?: string;
      compatibility_flags?: string[];
      bindings?: Array<{ type: string; name: string; text: string }>;
    };
    const modules: Record<string, { js?: string; wasm?: string }> = {};
    for (const [part, value] of form.entries()) {
      if (part === 'metadata' || typeof value === 'string') continue;
      modules[part] = value.type === 'application/wasm' ? { wasm: Buffer.from(await value.arrayBuffer()).toString('base64') } : { js: await value.text() };
    }
    if (!metadata.main_module || !modules[metadata.main_module])
      return answer(response, 400, { errors: [{ code: 10021, message: 'No such module: the main module is not among the parts' }] });
    const bindings = metadata.bindings ?? [];
    if (bindings.some((binding) => binding.type !== 'plain_text' && binding.type !== 'secret_text'))
      return answer(response, 400, { errors: [{ code: 10021, message: 'unknown binding type' }] });
    version += 1;
    const pushed = await internal('PUT', name, {
      version,
      mainModule: metadata.main_module,
      compatibilityDate: metadata.compatibility_date ?? '2026-11-17',
      compatibilityFlags: metadata.compatibility_flags ?? [],
      env: Object.fromEntries(bindings.map((binding) => [binding.name, binding.text])),
      modules,
    });
    if (!pushed.ok) return answer(response, 500, { errors: [{ code: 10013, message: 'the stand-in could not run the script' }] });
    scripts.set(name, {
      name,
      mainModule: metadata.main_module,
      compatibilityDate: metadata.compatibility_date ?? '',
      compatibilityFlags: metadata.compatibility_flags ?? [],
      bindings,
      modules: Object.keys(modules),
    });
    return answer(response, 200, { result: { id: name, etag: String(version) } });
  });
  const api = await listenOnFreePort(server);
  return {
    apiUrl: `http://127.0.0.1:${api.port}/client/v4`,
    dispatchUrl,
    accountId,
    namespace,
    apiToken,
    dispatchToken,
    scripts,
    requests,
    async close() {
      await api.close();
      await workerd.stop();
    },
  };
}
