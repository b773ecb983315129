import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { ServiceError } from './errors.ts';
import { createServiceApp } from './http/create-app.ts';
import { terminalLogLines, terminalLogStream, useTerminalLogLines } from './terminal-log-lines.ts';

/** A service app whose logger writes terminal lines into `lines`. */
function appLoggingTo(lines: string[], requests: boolean) {
  const logger = pino(
    { level: 'info', base: { service: 'router' } },
    terminalLogStream('router', { requests, color: false }, (line) => lines.push(line)),
  );
  const app = createServiceApp({ logger, api: undefined, bodyLimit: 1024 });
  app.get('/hello', async () => ({ ok: true }));
  app.get('/refused', async () => {
    throw new ServiceError('forbidden', 'not yours');
  });
  app.get('/broken', async () => {
    throw new Error('the disk is gone');
  });
  return { app, logger };
}

test('terminal lines: no block per request, no per-request line unless asked; warnings and errors always show, one line each (errors with their stack)', async () => {
  const lines: string[] = [];
  const { app, logger } = appLoggingTo(lines, false);
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    logger.info({ url: 'http://127.0.0.1:8443', database: 'PGlite in .data/router/db' }, 'router listening');
    for (const path of ['/hello', '/refused', '/missing']) await app.inject(path);
    assert.equal((await app.inject('/broken')).statusCode, 500);
    logger.warn({ attempts: 3 }, 'the daemon did not answer');
  } finally {
    await app.close();
  }
  const [listening, broken, ...rest] = lines;
  assert.equal(
    listening,
    'router       router listening url=http://127.0.0.1:8443 database="PGlite in .data/router/db"\n',
    'Fastify’s own listening line is left out',
  );
  assert.match(broken ?? '', /^router {7}ERROR .*: the disk is gone\n {4}at /, 'an error: its message, then its stack');
  assert.deepEqual(rest, ['router       WARN the daemon did not answer attempts=3\n']);
});

test('terminal lines with requests on (LOG_LEVEL=debug or up --log-requests): one line per request, as docker compose prints', async () => {
  const lines: string[] = [];
  const { app } = appLoggingTo(lines, true);
  try {
    await app.inject({ method: 'GET', url: '/hello?x=1' });
    await app.inject('/refused');
  } finally {
    await app.close();
  }
  const requests = lines.filter((line) => / ms\n$/.test(line));
  assert.equal(requests.length, 2, lines.join(''));
  assert.match(requests[0] ?? '', /^router {7}GET \/hello\?x=1 200 \d+\.\d ms\n$/);
  assert.match(requests[1] ?? '', /^router {7}GET \/refused 403 \d+\.\d ms\n$/);
  assert.ok(lines.includes('router       request refused code=forbidden reason="not yours"\n'), 'and the refusal’s own line');
  assert.equal(lines.length, 3, lines.join(''));
});

test('switched on once for the process, it reaches the worker threads started afterwards (settlement’s front threads log too)', async () => {
  assert.equal(terminalLogLines(), undefined, 'off unless platform up switches it on');
  useTerminalLogLines({ requests: false, color: true });
  const worker = new Worker(
    `import('${new URL('./terminal-log-lines.ts', import.meta.url).href}').then((m) => require('node:worker_threads').parentPort.postMessage(m.terminalLogLines()))`,
    { eval: true },
  );
  const [seen] = (await new Promise((resolve, reject) => {
    worker.once('message', (message) => resolve([message]));
    worker.once('error', reject);
  })) as [unknown];
  await worker.terminate();
  assert.deepEqual(seen, { requests: false, color: true });
});
