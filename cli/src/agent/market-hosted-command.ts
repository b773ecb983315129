import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { DeploymentView, LogLineView } from '@platform/client/marketplace-developer-client';
import { integerArgument, parseCommand, positionals } from './command-args.ts';
import { CommandFailure, printJson, printTable, UsageError } from './command-output.ts';
import { type CommandContext, useService } from './service-settings.ts';

const usage =
  'platform market deploy <folder> [--service <id>] [--publish] | market logs <service id> [--follow] [--level debug|info|warn|error] [--since <time>] [--until <time>] [--deployment <id>] [--limit <n>]';

const options = {
  url: { type: 'string' },
  service: { type: 'string' },
  publish: { type: 'boolean' },
  follow: { type: 'boolean' },
  level: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  deployment: { type: 'string' },
  limit: { type: 'string' },
} as const;

/** The folder's description of its Worker: what the upload's metadata part carries, and where it is listed. */
export const projectFile = 'marketplace.json';

interface Project {
  service_id?: string;
  manifest?: unknown;
  main_module: string;
  compatibility_date?: string;
  egress_allowlist?: string[];
  /** Plain text as given; a secret's value read from the environment variable it names (`from_env`), never from the file. */
  bindings?: Array<{ type: 'plain_text'; name: string; text: string } | { type: 'secret_text'; name: string; from_env: string }>;
}

/**
 * `platform market deploy <folder>`: uploads the folder's Worker (its .js, .mjs and .wasm files, and the metadata
 * of its marketplace.json), deploys it, and prints the deployment and its phases once it runs, or exits 1 with the
 * failing phase's reason. Without a service id (--service, or service_id in marketplace.json) it creates the
 * listing from the file's manifest and writes its id back. `platform market logs <service>`: the Workers' lines,
 * `--follow` to keep printing new ones. Requests are signed by the developer's wallet (PLATFORM_DEVELOPER_KEY).
 */
export async function run(_command: string, args: readonly string[], context: CommandContext): Promise<number> {
  const { values, positionals: words } = parseCommand(args, options);
  const [verb, target] = positionals(words, 2, usage) as [string, string];
  const client = await developerClient(context, values.url);
  if (verb === 'logs') return logs(client, target, values);
  if (verb !== 'deploy') throw new UsageError(`usage: ${usage}`);
  const project = await readProject(target);
  let serviceId = values.service ?? project.service_id;
  if (serviceId === undefined) {
    if (project.manifest === undefined)
      throw new UsageError(`${join(target, projectFile)} has neither service_id nor a manifest to create the listing from (or pass --service <id>)`);
    serviceId = (await client.createListing(project.manifest)).id;
    await writeFile(join(target, projectFile), `${JSON.stringify({ service_id: serviceId, ...project }, null, 2)}\n`);
    console.error(`created listing ${serviceId} (written to ${join(target, projectFile)})`);
  }
  const modules = await readModules(target);
  const artifact = await client.uploadArtifact(serviceId, metadataOf(project, context), modules);
  const deployment = await client.deploy(serviceId, { artifact_id: artifact.id });
  if (values.json) printJson({ artifact, deployment });
  else printDeployment(deployment);
  if (deployment.status !== 'running')
    throw new CommandFailure(
      `deployment ${deployment.id} failed in ${deployment.failed_phase ?? deployment.status}: ${deployment.failure ?? 'no reason given'}`,
    );
  if (values.publish) {
    const listing = await client.publish(serviceId);
    if (!values.json) console.log(`listing ${listing.id} is ${listing.status}`);
  }
  return 0;
}

async function developerClient(context: CommandContext, urlFlag: string | undefined) {
  const key = context.env.PLATFORM_DEVELOPER_KEY ?? '';
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key))
    throw new UsageError('hosted-mode commands sign with the developer’s wallet: set PLATFORM_DEVELOPER_KEY to its secp256k1 private key (0x + 64 hex)');
  const [{ privateKeyToAccount }, { MarketplaceDeveloperClient }] = await Promise.all([
    import('viem/accounts'),
    import('@platform/client/marketplace-developer-client'),
  ]);
  const account = privateKeyToAccount((key.startsWith('0x') ? key : `0x${key}`) as `0x${string}`);
  return new MarketplaceDeveloperClient({ baseUrl: useService(context, 'marketplace', urlFlag).url, signer: account });
}

async function readProject(folder: string): Promise<Project> {
  let text: string;
  try {
    text = await readFile(join(folder, projectFile), 'utf8');
  } catch {
    throw new CommandFailure(`${join(folder, projectFile)} is missing: it names the main module (and the listing, bindings, egress allowlist)`);
  }
  let project: Project;
  try {
    project = JSON.parse(text) as Project;
  } catch {
    throw new CommandFailure(`${join(folder, projectFile)} is not JSON`);
  }
  if (typeof project?.main_module !== 'string') throw new CommandFailure(`${join(folder, projectFile)} must name main_module`);
  return project;
}

function metadataOf(project: Project, context: CommandContext) {
  const bindings = (project.bindings ?? []).map((binding) => {
    if (binding.type !== 'secret_text') return binding;
    const value = context.env[binding.from_env];
    if (value === undefined || value === '') throw new UsageError(`the secret binding ${binding.name} reads ${binding.from_env}, which is not set`);
    return { type: 'secret_text', name: binding.name, text: value };
  });
  return {
    main_module: project.main_module,
    ...(project.compatibility_date ? { compatibility_date: project.compatibility_date } : {}),
    egress_allowlist: project.egress_allowlist ?? [],
    bindings,
  };
}

/** The folder's modules, named by their path inside it; node_modules and dot folders are left out. */
async function readModules(folder: string): Promise<Record<string, Uint8Array>> {
  const modules: Record<string, Uint8Array> = {};
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 8) return;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (/\.(js|mjs|wasm)$/.test(entry.name) && (await stat(path)).isFile()) modules[relative(folder, path).split(sep).join('/')] = await readFile(path);
    }
  };
  await walk(folder, 0);
  if (Object.keys(modules).length === 0) throw new CommandFailure(`${folder} holds no .js, .mjs or .wasm file to upload`);
  return modules;
}

function printDeployment(deployment: DeploymentView): void {
  printTable(
    ['phase', 'state', 'ms'],
    deployment.phases.map((phase) => [phase.name, phase.state, phase.duration_ms === null ? '' : String(phase.duration_ms)]),
  );
  console.log(`\ndeployment ${deployment.id} ${deployment.status}${deployment.current ? ' (takes the listing’s calls)' : ''}`);
}

async function logs(
  client: Awaited<ReturnType<typeof developerClient>>,
  serviceId: string,
  values: { follow?: boolean; level?: string; since?: string; until?: string; deployment?: string; limit?: string; json?: boolean },
): Promise<number> {
  if (values.level !== undefined && !['debug', 'info', 'warn', 'error'].includes(values.level))
    throw new UsageError('--level must be debug, info, warn or error');
  const limit = integerArgument(values.limit, '--limit', { min: 1, max: 1000 });
  const query = {
    ...(values.level ? { level: values.level } : {}),
    ...(values.since ? { since: values.since } : {}),
    ...(values.until ? { until: values.until } : {}),
    ...(values.deployment ? { deployment_id: values.deployment } : {}),
    ...(limit ? { limit } : {}),
  };
  const print = (line: LogLineView) =>
    console.log(
      values.json ? JSON.stringify(line) : `${line.at} ${line.level.padEnd(5)} ${line.deployment_id.slice(-8)} ${line.invocation_id ?? '-'} ${line.message}`,
    );
  if (!values.follow) {
    for (const line of await client.logs(serviceId, query)) print(line);
    return 0;
  }
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  await client.followLogs(serviceId, query, print, stop.signal);
  return 0;
}
