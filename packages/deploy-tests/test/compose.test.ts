import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { platformBin } from '@platform/testkit/run-command';
import { type ComposeFile, interpolate, readCompose, readEnvFile, serviceEnvironment } from '../src/compose-file.ts';
import { deployedServices, documentedSettings, listeningPorts, loadServiceConfig, repo } from '../src/service-settings.ts';

const deploy = join(repo, 'deploy');
const composePath = join(deploy, 'compose.yaml');
const rootSecret = 'compose-check-root-secret-0123456789abcdef';

/** deploy/make-compose-env.sh into `out`, run as an operator would (this checkout's `platform`). */
function makeComposeEnv(out: string) {
  const env = { PATH: process.env.PATH ?? '', PLATFORM_SECRET: rootSecret, OUT_DIR: out, PLATFORM_COMMAND: `${process.execPath} ${platformBin}` };
  const run = spawnSync('sh', [join(deploy, 'make-compose-env.sh')], { env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
}

describe('deploy/compose.yaml', () => {
  let envDir: string;
  let variables: Record<string, string>;
  let compose: ComposeFile;
  const envFile = (name: string) => join(envDir, name.replace(/^env\//, ''));

  before(() => {
    envDir = mkdtempSync(join(tmpdir(), 'compose-env-'));
    makeComposeEnv(envDir);
    variables = readEnvFile(join(deploy, 'compose.env.example'));
    compose = readCompose(composePath, variables);
  });
  after(() => rmSync(envDir, { recursive: true, force: true }));

  test('every deployed service runs from the one image as `serve <name>`, read-only, with its own volume at /data', () => {
    const platformServices = Object.entries(compose.services).filter(([, service]) => service.image === variables.PLATFORM_IMAGE);
    assert.deepEqual(platformServices.map(([name]) => name).sort(), [...deployedServices].sort());
    assert.equal(compose.services.identity, undefined, 'no development identity provider');
    for (const name of deployedServices) {
      const service = compose.services[name];
      assert.ok(service, name);
      assert.deepEqual(service.command, ['serve', name]);
      assert.equal(service.read_only, true, `${name}: the root filesystem is read-only (only /data and /tmp are written)`);
      assert.deepEqual(service.volumes, [`${name}-data:/data`]);
      assert.equal(service.depends_on?.postgres?.condition, 'service_healthy');
    }
  });

  test('volumes: every one used is declared, every one declared is used; only Caddy publishes ports beyond loopback', () => {
    const used = Object.values(compose.services).flatMap((service) =>
      (service.volumes ?? []).map((volume) => volume.split(':')[0] as string).filter((source) => !source.startsWith('.')),
    );
    assert.deepEqual([...new Set(used)].sort(), Object.keys(compose.volumes).sort());
    const publishing = Object.entries(compose.services).filter(([, service]) => (service.ports ?? []).length > 0);
    // Caddy on every interface; the observability profile's Prometheus and Grafana on the host's loopback only.
    assert.deepEqual(publishing.map(([name]) => name).sort(), ['caddy', 'grafana', 'prometheus']);
    for (const [name, service] of publishing)
      if (name !== 'caddy') for (const port of service.ports ?? []) assert.match(port, /^127\.0\.0\.1:/, `${name} publishes ${port} on loopback only`);
    for (const name of ['prometheus', 'grafana']) assert.deepEqual(compose.services[name]?.profiles, ['observability'], `${name} runs only when asked`);
    for (const [name, service] of Object.entries(compose.services))
      for (const dependency of Object.keys(service.depends_on ?? {}))
        assert.ok(compose.services[dependency], `${name} depends on ${dependency}, which is defined`);
  });

  test("each service's settings are ones it documents, and its own config parser takes them in production", async () => {
    for (const name of deployedServices) {
      const env = serviceEnvironment(compose.services[name] as never, envFile);
      const documented = await documentedSettings(name);
      const unknown = Object.keys(env).filter((setting) => !documented.has(setting) && !setting.startsWith('POSTGRES_'));
      assert.deepEqual(unknown, [], `${name}: settings its README does not name`);
      assert.equal(env.NODE_ENV, 'production', name);
      const config = await loadServiceConfig(name, env);
      if ('production' in config) assert.equal(config.production, true, `${name} runs in production mode`);
    }
    const router = await loadServiceConfig('router', serviceEnvironment(compose.services.router as never, envFile));
    assert.equal((router.identityProvider as { url: string }).url, variables.IDP_URL, "the router trusts the operator's OpenID provider");
  });

  test('every service address points at a service of the file, on the port that service listens on', () => {
    const listening = new Map(Object.entries(compose.services).map(([name, service]) => [name, listeningPorts(serviceEnvironment(service, envFile))] as const));
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [setting, value] of Object.entries(serviceEnvironment(service, envFile))) {
        for (const match of value.matchAll(/\b(?:http|postgres):\/\/(?:[^@/\s"]*@)?([a-z][a-z0-9-]*):(\d+)/g)) {
          const [host, port] = [match[1] as string, Number(match[2])];
          if (host === 'postgres') {
            assert.equal(port, 5432, `${name} ${setting}`);
            continue;
          }
          assert.ok(listening.has(host), `${name} ${setting}: ${host} is a service of the file`);
          assert.ok(listening.get(host)?.includes(port), `${name} ${setting}: ${host} listens on ${port} (it listens on ${listening.get(host)})`);
        }
      }
    }
  });

  test('secrets come from make-compose-env.sh only: none in the file, each env file owner-only, keys made once and kept', () => {
    const text = readFileSync(composePath, 'utf8');
    assert.equal(statSync(envDir).mode & 0o777, 0o700, 'env/ is the owner’s alone');
    // Prometheus' credentials file: the bearer alone, readable by the container's user (env/ itself is 0700).
    const metricsToken = readFileSync(join(envDir, 'metrics-token'), 'utf8').trim();
    assert.equal(statSync(join(envDir, 'metrics-token')).mode & 0o777, 0o644);
    for (const service of deployedServices) assert.equal(readEnvFile(join(envDir, `${service}.env`)).PLATFORM_METRICS_TOKEN, metricsToken, service);
    assert.ok(!text.includes(metricsToken));
    for (const file of readdirSync(envDir)) {
      if (file === 'metrics-token') continue;
      assert.equal(statSync(join(envDir, file)).mode & 0o777, 0o600, file);
      for (const value of Object.values(readEnvFile(join(envDir, file))))
        if (value.length >= 16) assert.ok(!text.includes(value), `${file}: a secret in compose.yaml`);
    }
    const referenced = Object.values(compose.services).flatMap((service) => service.env_file ?? []);
    for (const file of referenced) assert.ok(readdirSync(envDir).includes(file.replace(/^env\//, '')), `${file} is written by make-compose-env.sh`);
    const keys = readFileSync(join(envDir, 'contracts-keys.env'), 'utf8');
    const database = readFileSync(join(envDir, 'database.env'), 'utf8');
    makeComposeEnv(envDir);
    assert.equal(readFileSync(join(envDir, 'contracts-keys.env'), 'utf8'), keys, 'a second run keeps the wallet key');
    assert.equal(readFileSync(join(envDir, 'database.env'), 'utf8'), database, 'and the database password');
  });

  test('an operator setting that production needs is refused when missing, naming it, as `docker compose` does', () => {
    const text = readFileSync(composePath, 'utf8');
    for (const required of ['IDP_URL', 'ROUTER_IDP_AUDIENCE', 'PLATFORM_DOMAIN']) {
      const { [required]: _dropped, ...rest } = variables;
      assert.throws(() => interpolate(text, rest), new RegExp(`required variable ${required} is missing`));
    }
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own syntax, not a template.
    assert.equal(interpolate('$${A} ${B:-x} ${C-y} ${D}', { C: '' }), '${A} x  ');
  });
});
