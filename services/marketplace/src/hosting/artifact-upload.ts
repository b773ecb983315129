import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { canonicalJson } from '@platform/kit/canonical-json';
import { ServiceError } from '@platform/kit/errors';
import { isStorableText } from '@platform/kit/http/input-text';
import type { HostedModule, StoredBinding } from '../db/schema.ts';
import { isPrivateAddress } from '../http/ssrf.ts';
import { hostedLimits } from './hosted-limits.ts';
import type { SecretSealer } from './secrets.ts';

/** The newest compatibility date the bundled workerd knows (its version); later dates are refused. */
export const runtimeCompatibilityDate = '2026-11-17';
/** The oldest date with ES module Workers. */
const oldestCompatibilityDate = '2021-11-03';

export interface ArtifactInput {
  id: string;
  main_module: string;
  compatibility_date: string;
  egress_allowlist: string[];
  bindings: StoredBinding[];
  modules: HostedModule[];
  size_bytes: number;
}

const modulePath = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*\.(?:js|mjs|wasm)$/;
const bindingName = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const hostPattern = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const metadataMembers = new Set(['main_module', 'compatibility_date', 'egress_allowlist', 'bindings']);

const refuse = (message: string, field: string) => new ServiceError('invalid_request', message, { details: { field } });

/**
 * Reads a Worker upload, the shape of Workers for Platforms' script upload: `multipart/form-data` with a `metadata`
 * part (JSON: `main_module`, optional `compatibility_date`, `egress_allowlist`, `bindings` of `plain_text` and
 * `secret_text`) and one part per module, named by its path (`.js`/`.mjs` ES modules, `.wasm` WebAssembly). Checks
 * every limit (hosted-limits.ts), seals the secrets and gives the upload its content address.
 */
export async function readArtifactUpload(
  body: Buffer,
  contentType: string,
  options: { sealer: SecretSealer; allowPrivateHosts: boolean },
): Promise<ArtifactInput> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw refuse(`the upload is not readable multipart/form-data: ${(error as Error).message}`, 'body');
  }
  const entries = [...form.entries()];
  if (entries.length > hostedLimits.parts)
    throw refuse(
      `an upload has at most ${hostedLimits.parts} parts (the metadata and ${hostedLimits.parts - 1} modules); this one has ${entries.length}`,
      'body',
    );
  const metadataParts = entries.filter(([name]) => name === 'metadata');
  if (metadataParts.length !== 1) throw refuse('an upload needs exactly one part named metadata (JSON: main_module, …)', 'metadata');
  const metadataBytes = await bytesOf(metadataParts[0]?.[1] as string | Blob);
  if (metadataBytes.length > hostedLimits.metadataBytes) throw refuse(`the metadata part is over ${hostedLimits.metadataBytes} bytes`, 'metadata');
  const metadata = parseMetadata(metadataBytes);
  const modules: HostedModule[] = [];
  const digests: Array<{ name: string; type: string; sha256: string }> = [];
  let size = metadataBytes.length;
  for (const [name, value] of entries) {
    if (name === 'metadata') continue;
    if (name.length > hostedLimits.moduleNameLength || !modulePath.test(name) || name.split('/').some((segment) => segment === '.' || segment === '..'))
      throw refuse(
        `module name ${JSON.stringify(name.slice(0, 160))} is not a relative path of A-Z a-z 0-9 . _ - segments ending .js, .mjs or .wasm (at most ${hostedLimits.moduleNameLength} characters)`,
        `modules/${name.slice(0, 160)}`,
      );
    if (modules.some((module) => module.name === name)) throw refuse(`module ${name} is uploaded twice`, `modules/${name}`);
    const bytes = await bytesOf(value);
    if (bytes.length > hostedLimits.moduleBytes)
      throw refuse(`module ${name} is ${bytes.length} bytes; a module may have at most ${hostedLimits.moduleBytes}`, `modules/${name}`);
    size += bytes.length;
    const type = name.endsWith('.wasm') ? 'wasm' : 'esm';
    if (type === 'wasm' && !(globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly.validate(bytes))
      throw refuse(`module ${name} is not valid WebAssembly`, `modules/${name}`);
    const content = type === 'wasm' ? bytes.toString('base64') : bytes.toString('utf8');
    if (type === 'esm' && !isStorableText(content)) throw refuse(`module ${name} is not UTF-8 text without NUL`, `modules/${name}`);
    modules.push({ name, type, content });
    digests.push({ name, type, sha256: createHash('sha256').update(bytes).digest('hex') });
  }
  if (modules.length === 0) throw refuse('an upload needs at least one module part', 'modules');
  const main = modules.find((module) => module.name === metadata.main_module);
  if (!main)
    throw refuse(
      `main_module ${metadata.main_module} is not among the uploaded modules (${modules.map((module) => module.name).join(', ')})`,
      'metadata/main_module',
    );
  if (main.type !== 'esm') throw refuse('main_module must be an ES module (.js or .mjs)', 'metadata/main_module');
  for (const host of metadata.egress_allowlist) {
    const bare = host.replace(/^\*\./, '');
    if (!options.allowPrivateHosts && (bare === 'localhost' || bare.endsWith('.localhost') || (isIP(bare) !== 0 && isPrivateAddress(bare))))
      throw refuse(`egress_allowlist names ${host}, a loopback or private address, which hosted workers may not reach here`, 'metadata/egress_allowlist');
  }
  const bindings = sealBindings(metadata.bindings, options.sealer);
  const addressed = {
    main_module: metadata.main_module,
    compatibility_date: metadata.compatibility_date,
    egress_allowlist: [...metadata.egress_allowlist].sort(),
    bindings: metadata.bindings
      .map((binding) => ({
        type: binding.type,
        name: binding.name,
        value: binding.type === 'secret_text' ? options.sealer.digest(binding.text) : binding.text,
      }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
    modules: digests.sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
  const id = createHash('sha256').update(canonicalJson(addressed)).digest('hex');
  return {
    id,
    main_module: metadata.main_module,
    compatibility_date: metadata.compatibility_date,
    egress_allowlist: addressed.egress_allowlist,
    bindings,
    modules,
    size_bytes: size,
  };
}

async function bytesOf(value: string | Blob): Promise<Buffer> {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(await value.arrayBuffer());
}

interface Metadata {
  main_module: string;
  compatibility_date: string;
  egress_allowlist: string[];
  bindings: BindingInput[];
}

export type BindingInput = { type: 'plain_text' | 'secret_text'; name: string; text: string };

/** Bindings as a developer sends them (`[{type: plain_text | secret_text, name, text}]`), checked; `at` names them in refusals. */
export function checkBindings(bindings: unknown, at: string): BindingInput[] {
  if (!Array.isArray(bindings) || bindings.length > hostedLimits.bindings)
    throw refuse(`${at} must be an array of at most ${hostedLimits.bindings} bindings`, at);
  const names = new Set<string>();
  return bindings.map((binding, index) => {
    const field = `${at}/${index}`;
    const entry = binding as Record<string, unknown> | null;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw refuse(`${field} must be {type, name, text}`, field);
    if (Object.keys(entry).some((key) => !['type', 'name', 'text'].includes(key))) throw refuse(`${field} takes only type, name and text`, field);
    if (entry.type !== 'plain_text' && entry.type !== 'secret_text') throw refuse(`${field}.type must be plain_text or secret_text`, `${field}/type`);
    if (typeof entry.name !== 'string' || !bindingName.test(entry.name))
      throw refuse(`${field}.name must be an identifier (A-Z a-z 0-9 _, at most 64)`, `${field}/name`);
    if (names.has(entry.name)) throw refuse(`binding ${entry.name} is named twice`, `${field}/name`);
    names.add(entry.name);
    if (typeof entry.text !== 'string' || !isStorableText(entry.text) || Buffer.byteLength(entry.text) > hostedLimits.bindingTextBytes)
      throw refuse(`${field}.text must be text (no NUL) of at most ${hostedLimits.bindingTextBytes} bytes`, `${field}/text`);
    return { type: entry.type as BindingInput['type'], name: entry.name, text: entry.text };
  });
}

/** Bindings as they are stored: secrets sealed. */
export function sealBindings(bindings: BindingInput[], sealer: SecretSealer): StoredBinding[] {
  return bindings.map((binding) =>
    binding.type === 'secret_text'
      ? { type: 'secret_text', name: binding.name, sealed: sealer.seal(binding.text) }
      : { type: 'plain_text', name: binding.name, text: binding.text },
  );
}

function parseMetadata(bytes: Buffer): Metadata {
  let value: unknown;
  const text = bytes.toString('utf8');
  if (!isStorableText(text)) throw refuse('the metadata part must be UTF-8 JSON without NUL', 'metadata');
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('the metadata part is not JSON', 'metadata');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refuse('the metadata part must be a JSON object', 'metadata');
  const record = value as Record<string, unknown>;
  for (const member of Object.keys(record))
    if (!metadataMembers.has(member))
      throw refuse(
        `metadata member ${JSON.stringify(member.slice(0, 64))} is not known (main_module, compatibility_date, egress_allowlist, bindings)`,
        `metadata/${member.slice(0, 64)}`,
      );
  const main = record.main_module;
  if (typeof main !== 'string' || main === '') throw refuse('metadata.main_module must name the entry module', 'metadata/main_module');
  const date = record.compatibility_date ?? runtimeCompatibilityDate;
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date)))
    throw refuse('metadata.compatibility_date must be a date, YYYY-MM-DD', 'metadata/compatibility_date');
  if (date > runtimeCompatibilityDate || date < oldestCompatibilityDate)
    throw refuse(
      `metadata.compatibility_date must be between ${oldestCompatibilityDate} and ${runtimeCompatibilityDate} (the runtime's own date)`,
      'metadata/compatibility_date',
    );
  const egress = record.egress_allowlist ?? [];
  if (!Array.isArray(egress) || egress.length > hostedLimits.egressHosts)
    throw refuse(`metadata.egress_allowlist must be an array of at most ${hostedLimits.egressHosts} host names`, 'metadata/egress_allowlist');
  const hosts = egress.map((host, index) => {
    if (typeof host !== 'string' || host.length > 253 || !hostPattern.test(host.toLowerCase()))
      throw refuse(
        `metadata.egress_allowlist[${index}] must be a host name (api.example.com, or *.example.com for its subdomains)`,
        `metadata/egress_allowlist/${index}`,
      );
    return host.toLowerCase();
  });
  const checked = checkBindings(record.bindings ?? [], 'metadata/bindings');
  return { main_module: main, compatibility_date: date, egress_allowlist: hosts, bindings: checked };
}
