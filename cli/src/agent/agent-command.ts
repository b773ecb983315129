import { agentKeyPath, createAgentKeyFile, loadAgentKey } from './agent-key-file.ts';
import { parseCommand, positionals } from './command-args.ts';
import { printFields, printJson, UsageError } from './command-output.ts';
import type { CommandContext } from './service-settings.ts';

const usage =
  'platform agent new [--user-id <id>] [--file <path>] [--json] | platform agent show [--file <path>] [--json] | platform agent use [--url <daemon url>] [--file <path>] [--json]';

/**
 * `platform agent new` writes a new agent key file (0600, never over an existing one); `platform agent show` reads
 * it; `platform agent use` links it with the person's own agent (agent-use.ts), writing it first for that agent's
 * user when there is none. They print the DID, the public key, the user id and where the key is, never the seed.
 */
export async function run(_command: string, args: readonly string[], context: CommandContext): Promise<number> {
  const { values, positionals: words } = parseCommand(args, { 'user-id': { type: 'string' }, file: { type: 'string' }, url: { type: 'string' } });
  const [verb] = positionals(words, 1, usage);
  const env = values.file ? { ...context.env, PLATFORM_AGENT_FILE: values.file, PLATFORM_AGENT_KEY: undefined } : context.env;
  if (values.url !== undefined && verb !== 'use') throw new UsageError('--url is for `agent use` (the daemon to link the key with)');
  let shown: { did: string; public_key: string; user_id: string; file: string };
  if (verb === 'use') {
    if (values['user-id'] !== undefined) throw new UsageError('--user-id is for `agent new`: `agent use` takes the agent’s user');
    const { useAgent } = await import('./agent-use.ts');
    shown = await useAgent(context, env, values.url);
  } else if (verb === 'new') {
    const path = agentKeyPath(env);
    const { key, userId } = createAgentKeyFile(path, values['user-id']);
    shown = { did: key.did, public_key: key.publicKeyHex, user_id: userId, file: path };
  } else if (verb === 'show') {
    if (values['user-id'] !== undefined) throw new UsageError('--user-id is for `agent new`');
    const { key, userId, source } = loadAgentKey(env);
    shown = { did: key.did, public_key: key.publicKeyHex, user_id: userId, file: source };
  } else throw new UsageError(`usage: ${usage}`);
  if (values.json) printJson(shown);
  else printFields(shown);
  return 0;
}
