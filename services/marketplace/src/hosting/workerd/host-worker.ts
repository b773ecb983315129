import { egressRefusedHeader, probeHeader } from '../worker-wrapper.ts';

/**
 * The one Worker the marketplace's workerd runs itself: it keeps the deployments it is handed and loads each into an
 * isolate of its own with workerd's Worker Loader (no file system, `env` = its bindings only), whose every outbound
 * request and socket goes to `Outbound`, which lets through only the hosts of that deployment's allowlist, to public
 * addresses (the `internet` service of the config). Only the marketplace, holding the host token, talks to it.
 */
export function hostWorkerSource(): string {
  return `
import { WorkerEntrypoint } from 'cloudflare:workers';
const deployments = new Map();
const encoder = new TextEncoder();
const allowed = (allowlist, host) =>
  allowlist.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
export class Outbound extends WorkerEntrypoint {
  async fetch(request) {
    const host = new URL(request.url).hostname.toLowerCase().replace(/^\\[|\\]$/g, '');
    if (!allowed(this.ctx.props.allowlist, host))
      return new Response('egress to ' + host + ' is not in this worker’s egress_allowlist', { status: 403, headers: { '${egressRefusedHeader}': host } });
    return fetch(request);
  }
  connect() {
    throw new Error('raw sockets are not available to hosted workers');
  }
}
const json = (status, value) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
function load(env, ctx, id, deployment) {
  return env.LOADER.get(id, () => ({
    compatibilityDate: deployment.compatibilityDate,
    compatibilityFlags: ['nodejs_compat'],
    mainModule: 'platform-entry.js',
    modules: Object.fromEntries([
      ['platform-entry.js', deployment.bundle],
      ...deployment.wasm.map((module) => [module.name, { wasm: Uint8Array.from(atob(module.content), (c) => c.charCodeAt(0)) }]),
    ]),
    env: deployment.env,
    globalOutbound: ctx.exports.Outbound({ props: { allowlist: deployment.egressAllowlist } }),
  }));
}
export default {
  async fetch(request, env, ctx) {
    const token = encoder.encode(request.headers.get('x-platform-host-token') ?? '');
    const expected = encoder.encode(env.HOST_TOKEN);
    if (token.byteLength !== expected.byteLength || !crypto.subtle.timingSafeEqual(token, expected)) return json(401, { error: 'unauthorized' });
    const url = new URL(request.url);
    const [, scope, kind, id, ...rest] = url.pathname.split('/');
    if (scope !== '_platform' || !id) return json(404, { error: 'not_found' });
    if (kind === 'deployments' && request.method === 'PUT') {
      deployments.set(id, await request.json());
      return json(200, { ok: true });
    }
    if (kind === 'deployments' && request.method === 'DELETE') {
      deployments.delete(id);
      return json(200, { ok: true });
    }
    const deployment = deployments.get(id);
    if (!deployment) return json(404, { error: 'unknown_deployment' });
    const headers = new Headers(request.headers);
    headers.delete('x-platform-host-token');
    if (kind === 'probe') headers.set('${probeHeader}', '1');
    else headers.delete('${probeHeader}');
    const forwarded = new Request('https://worker.hosted/' + rest.join('/') + url.search, {
      method: kind === 'probe' ? 'GET' : request.method,
      headers,
      body: kind === 'probe' || request.method === 'GET' ? undefined : request.body,
    });
    try {
      return await load(env, ctx, id, deployment).getEntrypoint().fetch(forwarded);
    } catch (error) {
      return json(502, { error: 'load_failed', message: String(error && error.stack ? error.stack : error) });
    }
  },
};
`;
}

/** The workerd configuration: the host Worker on a loopback port, and the internet it may reach. */
export function workerdConfig(options: { port: number; allowPrivate: boolean }): string {
  const networks = options.allowPrivate ? '"public", "private", "local"' : '"public"';
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "host", worker = .host),
    (name = "internet", network = (allow = [${networks}], tlsOptions = (trustBrowserCas = true))),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${options.port}", http = (), service = "host") ],
);
const host :Workerd.Worker = (
  modules = [ (name = "host.js", esModule = embed "host.js") ],
  compatibilityDate = "2026-11-17",
  bindings = [
    (name = "LOADER", workerLoader = ()),
    (name = "HOST_TOKEN", fromEnvironment = "PLATFORM_HOST_TOKEN"),
  ],
  globalOutbound = "internet",
);
`;
}
