import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { commandLineOf as commandOf, descendantPids as descendants } from '@platform/testkit/process-tree';
import { platformBin } from '@platform/testkit/run-command';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { generatePrivateKey } from 'viem/accounts';
import { platform, tempFolder } from './agent-cli-harness.ts';

const manifest = {
  version: 1,
  display_name: 'CLI hosted echo',
  summary: 'Deployed by platform market deploy',
  kind: 'api',
  operations: [
    {
      name: 'echo',
      description: 'Echoes',
      input_schema: { type: 'object' },
      output_schema: { type: 'object' },
      pricing: { unit: 'call', price_per_unit: '0.001', max_units: 1 },
    },
  ],
};

describe('platform market deploy and logs against a marketplace process running workerd', () => {
  let marketplace: ServiceProcess;
  let home: ReturnType<typeof tempFolder>;
  let project: ReturnType<typeof tempFolder>;
  let env: Record<string, string>;
  let serviceId: string;
  const workerd: number[] = [];
  before(async () => {
    marketplace = await startServiceProcess('marketplace', { MARKETPLACE_DEV: 'true', MARKETPLACE_AGENT_AUTH_SECRET: 'cli-hosted-secret-0123456789' });
    home = tempFolder('market-deploy-home-');
    project = tempFolder('market-deploy-project-');
    env = { PLATFORM_MARKETPLACE_URL: marketplace.url, PLATFORM_DEVELOPER_KEY: generatePrivateKey(), SHOUT_KEY: 'cli-secret-value-42' };
  });
  after(async () => {
    await marketplace?.stop();
    home?.remove();
    project?.remove();
  });

  test('deploy creates the listing, uploads the folder, waits for running and publishes; logs and --follow print its lines', async () => {
    writeFileSync(
      join(project.path, 'marketplace.json'),
      JSON.stringify({ manifest, main_module: 'worker.js', bindings: [{ type: 'secret_text', name: 'KEY', from_env: 'SHOUT_KEY' }] }),
    );
    writeFileSync(
      join(project.path, 'worker.js'),
      `console.log('cli worker loaded');\nexport default { async fetch(request, env) { return Response.json({ result: { ok: env.KEY.length }, units: 1 }); } };\n`,
    );
    const deployed = await platform(['market', 'deploy', project.path, '--publish'], home.path, env);
    assert.equal(deployed.code, 0, deployed.stderr);
    assert.match(deployed.stdout, /^phase +state +ms$/m);
    assert.match(deployed.stdout, /^running +succeeded/m);
    assert.match(deployed.stdout, /deployment [0-9a-f-]{36} running/);
    assert.match(deployed.stdout, /is active/);
    assert.ok(!deployed.stdout.includes('cli-secret-value-42'));
    serviceId = JSON.parse(readFileSync(join(project.path, 'marketplace.json'), 'utf8')).service_id;
    assert.match(serviceId, /^[0-9a-f-]{36}$/);
    for (const pid of await descendants(marketplace.process.pid as number)) if ((await commandOf(pid)).includes('workerd')) workerd.push(pid);
    assert.equal(workerd.length, 1, 'one workerd serves the deployments');

    const logs = await platform(['market', 'logs', serviceId], home.path, env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /info +[0-9a-f]{8} - cli worker loaded/);

    const follower = spawn(process.execPath, [platformBin, 'market', 'logs', serviceId, '--follow', '--json'], {
      env: { PATH: process.env.PATH ?? '', HOME: home.path, ...env },
    });
    let followed = '';
    follower.stdout.on('data', (chunk: Buffer) => {
      followed += chunk;
    });
    await eventually(
      () => followed.includes('cli worker loaded'),
      () => `the follower printed: ${followed}`,
    );
    const ended = new Promise((resolve) => follower.once('exit', resolve));
    follower.kill('SIGINT');
    await ended;
  });

  test('a build that fails exits 1 naming the phase and the line', async () => {
    writeFileSync(join(project.path, 'worker.js'), `import missing from 'left-pad';\nexport default { fetch: () => new Response(missing) };\n`);
    const failed = await platform(['market', 'deploy', project.path], home.path, env);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /failed in build: worker\.js:1:\d+: cannot import "left-pad"/);
  });

  test('without a developer key the command says which setting to set', async () => {
    const refused = await platform(['market', 'logs', serviceId], home.path, { PLATFORM_MARKETPLACE_URL: marketplace.url });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /PLATFORM_DEVELOPER_KEY/);
  });

  test('stopping the marketplace leaves no workerd behind', async () => {
    await marketplace.stop();
    for (const pid of workerd) assert.equal(await commandOf(pid), '', `workerd ${pid} outlived the marketplace`);
  });
});
