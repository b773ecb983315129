import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  Agent,
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { openSse } from '@platform/testkit/sse-client';
import { loadConfig } from '../src/config.ts';
import { daemonLaunch } from '../src/main.ts';
import { environmentUser } from '../src/routes/proxy-route.ts';
import { type IdentityProvider, invite, ipv6Loopback, startIdentityProvider, startRouter } from './harness.ts';

const [pglite] = testEngines();

/** The status and text of the answer to a request made with node:http (which, unlike fetch, sends what a test writes as it writes it). */
function answerTo(request: ClientRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}
const gatewayToken = 'gw-token-for-router-tests';
// The gateway listens on IPv6 where the machine has it: ROUTER_GATEWAY_URL is then http://[::1]:<port>.
const gatewayHost = (await ipv6Loopback()) ? '::1' : '127.0.0.1';

describe('the proxy', () => {
  let idp: IdentityProvider;
  let model: ScriptedModel;
  let gateway: ServiceProcess;
  let router: Awaited<ReturnType<typeof startRouter>>;
  const cody: { headers: IncomingHttpHeaders; url: string; body?: string }[] = [];
  let codyServer: Awaited<ReturnType<typeof listenOnFreePort>>;
  const codyHangs = false;
  const sub = randomUUID();
  let token: string;
  const clock = new ManualClock(new Date());

  // `/cody/upload` keeps what it was sent; `/cody/big` answers `bigAnswer` in 64 KiB chunks, as fast as it may.
  const uploaded = async (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    cody.push({ headers: request.headers, url: request.url ?? '', body });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: body.length }));
  };
  const bigAnswer = Buffer.alloc(4 * 1024 * 1024, 'abcdefghijklmnopqrstuvwxyz');
  const writeBig = async (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let at = 0; at < bigAnswer.length; at += 65_536)
      if (!response.write(bigAnswer.subarray(at, at + 65_536))) await new Promise((resolve) => response.once('drain', resolve));
    response.end();
  };

  before(async () => {
    idp = await startIdentityProvider();
    model = await startScriptedModel(() => 'Hello from the model.');
    gateway = await startServiceProcess('gateway', {
      PLATFORM_GATEWAY_TOKEN: gatewayToken,
      GATEWAY_ADMIN_TOKEN: 'gw-admin',
      GATEWAY_UPSTREAM_URL: model.url,
      HOST: gatewayHost,
    });
    // The co-located code engine is not one of the platform's services: a stand-in that shows what it was sent.
    codyServer = await listenOnFreePort(
      createServer((request, response) => {
        if (request.url === '/upload') return void uploaded(request, response);
        if (request.url === '/drop') return void request.socket.destroy();
        if (request.url === '/big') return void writeBig(response);
        cody.push({ headers: request.headers, url: request.url ?? '' });
        if (codyHangs) return;
        response.writeHead(200, { 'content-type': 'application/json', connection: 'close', 'x-cody': 'yes' }).end('{"cody":true}');
      }),
    );
    router = await startRouter(pglite!, idp, {
      env: {
        ROUTER_GATEWAY_URL: gateway.url,
        PLATFORM_GATEWAY_TOKEN: gatewayToken,
        ROUTER_CODY_PORT: String(codyServer.port),
        ROUTER_CORS_ORIGINS: 'https://console.example',
      },
    });
    token = await idp.token({ sub });
    await invite(router, token);
  });
  after(async () => {
    await router?.dispose();
    await codyServer?.close();
    await gateway?.stop();
    await model?.close();
    await idp?.close();
  });

  test('a request body is streamed through to the daemon, which gets its own bearer, never the user’s token', async () => {
    const prose = 'stream me '.repeat(1_500).trim();
    const chunks = prose.match(/.{1,1000}/g) as string[];
    const request = httpRequest(`${router.publicUrl}/messages/async`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    const answered = answerTo(request);
    const parts = [`{"prose":"`, ...chunks, '"}'];
    const next = () => {
      const part = parts.shift();
      if (part === undefined) return request.end();
      request.write(part);
      setImmediate(next);
    };
    next();
    const answer = await answered;
    assert.equal(answer.status, 202, answer.body);
    const id = JSON.parse(answer.body).data.intent_id;
    const intent = await router.call('GET', `/intents/${id}`, token);
    assert.equal(intent.json.data.envelopes[0].body.prose, prose);
  });

  test('headers: hop-by-hop dropped, the forwarded family and the user id set by the router, the path under /cody stripped', async () => {
    // node:http, because fetch will not send a Connection header of its own.
    const answer = await new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
      const request = httpRequest(`${router.publicUrl}/cody/projects?x=1`, {
        headers: {
          authorization: `Bearer ${token}`,
          connection: 'keep-alive, x-secret-hop',
          'x-secret-hop': 'drop me',
          'x-platform-user-id': 'someone-else',
          'x-forwarded-for': '6.6.6.6',
          'x-custom': 'kept',
        },
      });
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
      });
      request.on('error', reject);
      request.end();
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['x-cody'], 'yes');
    assert.equal(answer.headers.connection, 'keep-alive', 'the router’s own connection, not the upstream’s close');
    const seen = cody.at(-1);
    assert.equal(seen?.url, '/projects?x=1');
    assert.equal(seen?.headers['x-platform-user-id'], sub);
    assert.equal(seen?.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen?.headers['x-custom'], 'kept');
    assert.equal(seen?.headers['x-secret-hop'], undefined);
    assert.match(String(seen?.headers.authorization), /^Bearer [A-Za-z0-9_-]{43}$/);
    assert.notEqual(seen?.headers.authorization, `Bearer ${token}`);
  });

  test('a body sent with Expect: 100-continue reaches the upstream whole, without the Expect (the router answered it)', async () => {
    const body = JSON.stringify({ note: 'x'.repeat(5_000) });
    const request = httpRequest(`${router.publicUrl}/cody/upload`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
    });
    let continued = false;
    request.on('continue', () => {
      continued = true;
      request.end(body);
    });
    const answer = await answerTo(request);
    assert.deepEqual([answer.status, continued, JSON.parse(answer.body).received], [200, true, body.length], answer.body);
    const seen = cody.at(-1);
    assert.deepEqual([seen?.url, seen?.body, seen?.headers.expect, seen?.headers['content-length']], ['/upload', body, undefined, String(body.length)]);
  });

  test('an upstream that drops the connection while the body is still coming is one 503 in the envelope', async () => {
    const request = httpRequest(`${router.publicUrl}/cody/drop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    });
    // A body that keeps coming until the answer is there: the upstream dropped it before it was whole.
    const more = setInterval(() => request.write('still sending '), 5);
    request.on('response', () => {
      clearInterval(more);
      request.end();
    });
    const answer = await answerTo(request);
    assert.equal(answer.status, 503, answer.body);
    assert.equal(JSON.parse(answer.body).error.code, 'unavailable');
  });

  test('a large answer to a reader slower than the upstream arrives whole and in order (the upstream paused and resumed at the client’s pace)', async () => {
    const received = await new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      const request = httpRequest(`${router.publicUrl}/cody/big`, { headers: { authorization: `Bearer ${token}` } });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        // Reads a chunk, then pauses a turn of the timers: slower than loopback writes, so the router's buffer fills.
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          response.pause();
          setTimeout(() => response.resume(), 1);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
    assert.equal(received.status, 200);
    assert.equal(received.body.length, bigAnswer.length);
    assert.ok(received.body.equals(bigAnswer), 'the same bytes, in order');
  });

  test('/gw goes to the gateway (at an IPv6 address where there is one) with the platform’s bearer and the user’s own actor; the user cannot pick another', async () => {
    if (gatewayHost === '::1') assert.match(gateway.url, /^http:\/\/\[::1\]:\d+$/);
    const answer = await router.call('POST', '/gw/v1/chat/completions', token, {
      headers: { 'x-platform-actor-did': 'did:platform:victim:0000000000000000', 'x-platform-slot': 'executor' },
      body: { model: 'accounts/fireworks/models/deepseek-v3', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.choices[0].message.content, 'Hello from the model.');
    await eventually(
      async () => {
        const spend = await fetch(`${gateway.url}/v1/admin/spend?actor=${encodeURIComponent(`did:user:${sub}`)}`, {
          headers: { authorization: 'Bearer gw-admin' },
        });
        return ((await spend.json()) as { data: unknown[] }).data.length === 1;
      },
      'metered to the user',
      20_000,
    );
  });

  test('SSE through the proxy: events flow, a client that leaves closes the daemon’s stream, a daemon that stops ends the client’s', async () => {
    const user = environmentUser((await router.router.deps.users.get(sub))!);
    const daemonHealth = async () => {
      const address = await router.router.deps.provider.address(user);
      return ((await (await fetch(`${address}/healthz`)).json()) as { data: { broker: { subscribers: number } } }).data.broker.subscribers;
    };
    const stream = await openSse(`${router.publicUrl}/events`, { authorization: `Bearer ${token}`, origin: 'https://console.example' });
    assert.equal(stream.status, 200);
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    assert.equal(stream.headers['access-control-allow-origin'], 'https://console.example');
    await eventually(async () => (await daemonHealth()) === 1, 'subscribed at the daemon', 20_000);
    await router.call('POST', '/messages/async', token, { body: { prose: 'make an event' } });
    await eventually(() => stream.events.some((event) => event.event === 'intent.created'), 'an event through the proxy', 20_000);
    stream.close();
    await eventually(async () => (await daemonHealth()) === 0, 'the daemon’s subscriber is gone', 20_000);

    const second = await openSse(`${router.publicUrl}/events`, { authorization: `Bearer ${token}` });
    await eventually(async () => (await daemonHealth()) === 1, 'subscribed again', 20_000);
    await router.router.deps.provider.stop(user);
    await eventually(() => second.ended, 'the client’s stream ends with the daemon', 20_000);
  });

  test('CORS: a preflight from an allowed origin is answered without a token; another origin gets no CORS headers', async () => {
    const preflight = await fetch(`${router.publicUrl}/messages/async`, {
      method: 'OPTIONS',
      headers: { origin: 'https://console.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://console.example');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
    const foreign = await router.call('GET', '/v/version', null, { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  });

  test('an upstream that cannot be reached is one 503 in the envelope, on a connection kept open for the next request', async () => {
    clock.set(new Date());
    const unreachable = await startRouter(pglite!, idp, {
      clock,
      env: { ROUTER_GATEWAY_URL: `http://127.0.0.1:${await freePort()}`, PLATFORM_GATEWAY_TOKEN: gatewayToken, ROUTER_CODY_PORT: String(await freePort()) },
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (path: string) =>
      new Promise<{ status: number; body: string; reusedSocket: boolean }>((resolve, reject) => {
        const sent = httpRequest(`${unreachable.publicUrl}${path}`, { agent, headers: { authorization: `Bearer ${token}` } }, (answer) => {
          let body = '';
          answer.setEncoding('utf8');
          answer.on('data', (chunk: string) => {
            body += chunk;
          });
          answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body, reusedSocket: sent.reusedSocket }));
          answer.on('error', reject);
        });
        sent.on('error', reject);
        sent.end();
      });
    try {
      const refused = await ask('/gw/v1/models');
      assert.equal(refused.status, 503);
      assert.equal(JSON.parse(refused.body).error.code, 'unavailable');
      // The 503 was written once and its connection left open: the next request goes over the same socket.
      const next = await ask('/v/version');
      assert.deepEqual([next.status, next.reusedSocket], [200, true]);
    } finally {
      agent.destroy();
      await unreachable.dispose();
    }
  });

  test('an upstream that stops sending is cut at ROUTER_PROXY_TIMEOUT on the injected clock: 503 with Retry-After, not 502', async () => {
    // The manual clock was made when the file loaded; on a loaded machine the setup can take longer than the token
    // checks' leeway (the provider's tokens say not-before 10 s before they were issued), so it starts from now here.
    clock.set(new Date());
    const slow = await startRouter(pglite!, idp, {
      clock,
      env: { ROUTER_GATEWAY_URL: gateway.url, PLATFORM_GATEWAY_TOKEN: gatewayToken, ROUTER_PROXY_TIMEOUT: '2s', ROUTER_CODY_PORT: String(await freePort()) },
    });
    model.setScript(() => ({ hang: true }));
    const asked = model.received.length;
    try {
      const pending = slow.call('POST', '/gw/v1/chat/completions', token, {
        headers: { 'x-platform-slot': 'executor' },
        body: { model: 'accounts/fireworks/models/deepseek-v3', messages: [{ role: 'user', content: 'hang' }], max_tokens: 10 },
      });
      await model.waitFor(asked + 1);
      clock.advance(2_000);
      const answer = await pending;
      assert.deepEqual([answer.status, answer.json.error.code, answer.headers.get('retry-after')], [503, 'unavailable', '1']);
    } finally {
      model.setScript(() => 'Hello from the model.');
      await slow.dispose();
    }
  });
});

test('the upstreams the proxy streams to are plain HTTP: an https: URL is refused at start, naming the setting', () => {
  for (const setting of ['ROUTER_GATEWAY_URL', 'ROUTER_SETTLEMENT_URL', 'ROUTER_MARKETPLACE_URL'])
    assert.throws(() => loadConfig({ [setting]: 'https://10.0.0.10:9090' }, daemonLaunch), new RegExp(`${setting} must use http:`));
  assert.equal(loadConfig({ ROUTER_GATEWAY_URL: 'http://[fdaa::3]:9090/' }, daemonLaunch).gatewayUrl, 'http://[fdaa::3]:9090');
});
