import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pollUntil } from '@platform/testkit/eventually';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { startTestChain, type TestChain } from '@platform/testkit/test-chain';
import { commandLine, type ImageConfig, imageUser, inspectImage, openedFiles, runInImage, uidsOf, unpackImage } from '../src/image-sandbox.ts';
import { imageRuns } from '../src/image-services.ts';

// The built image (scripts/image/build-image.sh prints its name; scripts/image/check-image.sh builds it and runs this
// file). Without it, or without PostgreSQL (the services run in production mode), there is nothing to check.
const image = process.env.PLATFORM_IMAGE;
const databaseUrl = process.env.TEST_DATABASE_URL;
const skip =
  image === undefined
    ? 'PLATFORM_IMAGE is not set (sh scripts/image/check-image.sh builds the image and runs this)'
    : databaseUrl === undefined
      ? 'needs TEST_DATABASE_URL'
      : false;
const repo = join(import.meta.dirname, '..', '..', '..');
// PLATFORM_IMAGE_TRACE=<folder>: strace every start and sum what the services opened (scripts/image/check-image.sh).
const traceDir = process.env.PLATFORM_IMAGE_TRACE;
const pinnedNode = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).devDependencies.node as string;

describe('the image', { skip }, () => {
  let config: ImageConfig;
  let unpacked: ReturnType<typeof unpackImage>;
  let database: TempDatabase;
  let dataRoot: string;
  let chain: TestChain | undefined;

  before(() => {
    config = inspectImage(image as string).config;
    unpacked = unpackImage(image as string);
    dataRoot = mkdtempSync(join(tmpdir(), 'platform-image-data-'));
    chmodSync(dataRoot, 0o755);
  });
  after(async () => {
    unpacked?.remove();
    if (dataRoot) rmSync(dataRoot, { recursive: true, force: true });
    await database?.drop();
    await chain?.stop();
  });

  test('its config: a non-root user, the volume, HEALTHCHECK on /healthz, tini first, the daemon by default, OCI labels', () => {
    const { healthcheck } = inspectImage(image as string);
    assert.equal(config.User, `${imageUser}:${imageUser}`);
    assert.deepEqual(Object.keys(config.Volumes), ['/data']);
    assert.ok(config.Env.includes('DATA_DIR=/data'));
    assert.deepEqual(healthcheck?.Test, ['CMD', '/usr/local/bin/node', '/opt/platform/healthcheck.mjs']);
    assert.deepEqual(config.Entrypoint, ['/usr/local/bin/tini', '--', '/usr/local/bin/platform']);
    assert.deepEqual(config.Cmd, ['daemon']);
    const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version;
    assert.equal(config.Labels['org.opencontainers.image.version'], version);
    assert.match(config.Labels['org.opencontainers.image.revision'] ?? '', /^[0-9a-f]{40}$/);
    assert.ok(config.Labels['org.opencontainers.image.source']);
  });

  test('its files: root owns what runs (read-only to the services), the user owns /data; what no service runs was cut', () => {
    const root = unpacked.rootfs;
    assert.equal(statSync(join(root, 'data')).uid, imageUser);
    for (const path of ['opt/platform/cli/bin/platform.js', 'opt/platform/node_modules', 'usr/local/bin/node'])
      assert.equal(statSync(join(root, path)).uid, 0, path);
    const owned = execFileSync('find', [root, '-uid', String(imageUser), '-not', '-path', `${root}/data*`], { encoding: 'utf8' }).trim();
    assert.equal(owned, '', 'nothing outside /data belongs to the user');
    for (const cut of ['@foundry-rs', 'typescript', '@platform/testkit'])
      assert.equal(existsSync(join(root, 'opt/platform/node_modules', cut)), false, `${cut} is not in the image`);
    // esbuild: the marketplace's hosted mode bundles every upload with it.
    for (const kept of ['@nomicfoundation/edr-linux-x64-gnu', 'sodium-native/prebuilds/linux-x64', '@kubernetes/client-node', 'esbuild', '@esbuild/linux-x64'])
      assert.ok(existsSync(join(root, 'opt/platform/node_modules', kept)), `${kept} is in the image`);
    assert.ok(existsSync(join(root, 'opt/platform/services/daemon/dist/main.js')), 'the daemon’s bundle');
    assert.ok(existsSync(join(root, 'opt/platform/web/console/dist/index.html')), 'the console’s build');
  });

  test('the pinned Node runs in it, as the user', async () => {
    const run = runInImage(
      unpacked.rootfs,
      { ...config, Entrypoint: ['/usr/local/bin/node'] },
      ['-p', 'process.version + " " + process.getuid()'],
      {},
      dataRoot,
    );
    assert.equal(await run.exited, 0, run.output());
    assert.equal(run.output().trim(), `v${pinnedNode} ${imageUser}`);
  });

  test("what only some deployments load is there too: the router's kubernetes provider, the connector's MCP proxy", async () => {
    const load = runInImage(
      unpacked.rootfs,
      { ...config, Entrypoint: ['/usr/local/bin/node'] },
      ['--input-type=module', '-e', "await import('/opt/platform/services/router/src/environments/kubernetes-provider.ts'); console.log('loaded')"],
      {},
      dataRoot,
    );
    assert.equal(await load.exited, 0, load.output());
    const registry = runInImage(unpacked.rootfs, config, ['connector', 'registry'], {}, dataRoot);
    assert.equal(await registry.exited, 0, registry.output());
    assert.ok(Array.isArray(JSON.parse(registry.output()).tools), 'the connector registry prints its tools');
  });

  test('every service starts from its entrypoint, answers /healthz and its HEALTHCHECK, runs as the user, and stops cleanly on SIGTERM', async (t) => {
    database = await createTempDatabase(databaseUrl as string, 'platform');
    // The contract engine is given a real node (on the host, as production gives it an external one): without a
    // chain it rightly logs an error, which this check refuses.
    chain = await startTestChain();
    const traces: string[] = [];
    for (const run of await imageRuns(database.url, chain.url)) {
      const data = mkdtempSync(join(dataRoot, `${run.name}-`));
      const trace = traceDir === undefined ? undefined : join(traceDir, `${run.name}.trace`);
      if (trace) traces.push(trace);
      const started = runInImage(unpacked.rootfs, config, run.args, run.env, data, trace === undefined ? {} : { trace });
      try {
        await pollUntil(
          async () => {
            if (started.child.exitCode !== null) throw new Error(`${run.name} exited ${started.child.exitCode}:\n${started.output()}`);
            return fetch(`http://127.0.0.1:${run.port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
              (answer) => answer.status === 200,
              () => false,
            );
          },
          () => `${run.name} answering /healthz with 200:\n${started.output()}`,
          { timeoutMs: 60_000, intervalMs: 100 },
        );
        const processes = started.descendants();
        const node = processes.find((pid) => commandLine(pid)[0] === '/usr/local/bin/node');
        assert.ok(node, `${run.name}: a node process`);
        for (const pid of processes)
          assert.deepEqual(uidsOf(pid).slice(0, 2), [imageUser, imageUser], `${run.name}: ${commandLine(pid).join(' ')} runs as ${imageUser}`);
        const check = runInImage(
          unpacked.rootfs,
          { ...config, Entrypoint: [] },
          [...(inspectImage(image as string).healthcheck?.Test.slice(1) ?? [])],
          run.env,
          data,
        );
        assert.equal(await check.exited, 0, `${run.name}: the HEALTHCHECK command passes: ${check.output()}`);
      } finally {
        const code = await started.stop();
        assert.equal(code, 0, `${run.name} stopped on SIGTERM with 0:\n${started.output()}`);
      }
      const output = started.output();
      assert.doesNotMatch(
        output,
        /ERR_MODULE_NOT_FOUND|Cannot find (module|package)|"level":(50|60)/,
        `${run.name} logged no missing module and no error:\n${output}`,
      );
    }
    if (traceDir !== undefined) {
      const files = openedFiles(traces, unpacked.rootfs);
      const needed = [...files.values()].reduce((sum, size) => sum + size, 0);
      const all = Number(execFileSync('du', ['-sb', unpacked.rootfs], { encoding: 'utf8' }).split('\t')[0]);
      t.diagnostic(
        `opened at run time by the ${traces.length} starts: ${files.size} files, ${(needed / 1e6).toFixed(1)} MB of the image's ${(all / 1e6).toFixed(1)} MB`,
      );
      writeFileSync(join(traceDir, 'opened-files.tsv'), [...files].map(([path, size]) => `${size}\t${path}`).join('\n'));
    }
  });
});
