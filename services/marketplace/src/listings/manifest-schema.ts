import { isIP } from 'node:net';
import { maxAmountMicros, parseAmount } from '@platform/kit/money';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { MarketplaceConfig } from '../config.ts';
import { isPrivateAddress } from '../http/ssrf.ts';
import { type Manifest, manifestKinds } from './manifest-types.ts';

/**
 * Manifest v1 as a JSON Schema (draft 2020-12), published at `GET /v1/manifest-schema`, and the checks a schema
 * cannot say (prices as settlement decimals, each operation's own schemas compiling, unique names, the endpoint's
 * scheme and host). Every problem is reported, each with a JSON pointer into the request body.
 */
export interface ManifestProblem {
  path: string;
  message: string;
}

export type ManifestCheck = { ok: true; manifest: Manifest } | { ok: false; problems: ManifestProblem[] };

export type ManifestSettings = Pick<MarketplaceConfig, 'dev' | 'providerTimeoutMs' | 'allowPrivateEndpoints'>;

export const manifestSchemaId = 'urn:platform:marketplace:manifest:1';
export const pricingUnits = ['call', 'token', 'second', 'byte', 'item'] as const;
export const manifestLimits = { operations: 64, tags: 16, maxUnits: 1_000_000, minTimeoutMs: 100, defaultTimeoutMs: 10_000 } as const;

// ajv-formats is CommonJS: its default export arrives wrapped under type stripping.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const text = (min: number, max: number, description: string) => ({ type: 'string', minLength: min, maxLength: max, description });

/** The schema for this marketplace's settings (the timeout ceiling is its own). */
export function manifestJsonSchema(settings: ManifestSettings): Record<string, unknown> {
  const timeout = { type: 'integer', minimum: manifestLimits.minTimeoutMs, maximum: settings.providerTimeoutMs };
  const operation = {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'description', 'input_schema', 'output_schema', 'pricing'],
    properties: {
      name: { type: 'string', pattern: '^[a-z][a-z0-9_.-]{0,63}$', description: 'Unique in the manifest' },
      description: text(1, 1000, 'What the operation does (searched by discovery)'),
      input_schema: { type: 'object', description: 'JSON Schema (2020-12) of the call’s `args`' },
      output_schema: { type: 'object', description: 'JSON Schema (2020-12) of the provider’s `result`' },
      pricing: {
        type: 'object',
        additionalProperties: false,
        required: ['unit', 'price_per_unit', 'max_units'],
        properties: {
          unit: { enum: [...pricingUnits], description: 'What is counted (display only)' },
          price_per_unit: { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,6})?$', description: 'Settlement-unit decimal, at most 6 places' },
          max_units: { type: 'integer', minimum: 1, maximum: manifestLimits.maxUnits, description: 'Most units one call may bill' },
        },
      },
      path: { type: 'string', pattern: "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,255}$", description: 'Appended to endpoint; default /<name>' },
      timeout_ms: { ...timeout, description: 'This operation’s timeout; default the manifest’s' },
    },
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: manifestSchemaId,
    title: 'Marketplace service manifest, version 1',
    type: 'object',
    additionalProperties: false,
    required: ['version', 'display_name', 'summary', 'kind', 'operations'],
    properties: {
      version: { const: 1 },
      display_name: text(1, 80, 'Shown in the catalog'),
      summary: text(1, 500, 'One paragraph, searched by discovery'),
      kind: { enum: [...manifestKinds] },
      endpoint: {
        type: 'string',
        format: 'uri',
        maxLength: 2048,
        description: 'Provider base URL: https (http only in development or on loopback); leave it out for a hosted listing (its Worker runs here)',
      },
      timeout_ms: { ...timeout, default: Math.min(manifestLimits.defaultTimeoutMs, settings.providerTimeoutMs) },
      confidential: { type: 'boolean', default: false },
      tags: {
        type: 'array',
        maxItems: manifestLimits.tags,
        uniqueItems: true,
        items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,31}$' },
        default: [],
      },
      operations: { type: 'array', minItems: 1, maxItems: manifestLimits.operations, items: operation },
    },
  };
}

/** The manifest validator per settings object (the service's frozen config): compiling it costs milliseconds. */
const validators = new WeakMap<ManifestSettings, ValidateFunction>();

const newAjv = (useDefaults: boolean) => addFormats(new Ajv2020({ allErrors: true, strict: false, useDefaults }));

/** Where an Ajv error points: the member itself for a missing or unexpected one, not its parent. */
function problemOf(error: ErrorObject, prefix: string): ManifestProblem {
  const extra = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[]; allowedValue?: unknown };
  const member = extra.missingProperty ?? extra.additionalProperty;
  const path = `${prefix}${error.instancePath}${member === undefined ? '' : `/${member.replaceAll('~', '~0').replaceAll('/', '~1')}`}`;
  const message =
    extra.additionalProperty !== undefined
      ? 'is not a manifest field'
      : extra.allowedValues !== undefined
        ? `must be one of ${extra.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`
        : extra.allowedValue !== undefined
          ? `must be ${JSON.stringify(extra.allowedValue)}`
          : (error.message ?? 'is invalid');
  return { path, message };
}

const loopbackHost = (host: string) => host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';

function endpointProblems(endpoint: string, settings: ManifestSettings): string[] {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return ['must be an absolute URL'];
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const problems: string[] = [];
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (settings.dev || loopbackHost(host))))
    problems.push(settings.dev ? 'must be http or https' : 'must be https (http only for a loopback host)');
  if (url.username !== '' || url.password !== '') problems.push('must not carry credentials');
  if (url.search !== '' || url.hash !== '') problems.push('must not have a query or fragment (operations append their path)');
  const privateHost = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host));
  if (privateHost && !settings.allowPrivateEndpoints) problems.push('names a loopback or private address, which this marketplace does not call');
  return problems;
}

/**
 * Validates a manifest and returns it with defaults filled in (timeout_ms, confidential, tags), as it is stored
 * and hashed. `prefix` is the JSON pointer of the manifest in the request body (`/manifest`).
 */
export function checkManifest(input: unknown, settings: ManifestSettings, prefix = ''): ManifestCheck {
  const manifest = structuredClone(input) as Manifest;
  let validate = validators.get(settings);
  if (!validate) {
    validate = newAjv(true).compile(manifestJsonSchema(settings));
    validators.set(settings, validate);
  }
  const problems: ManifestProblem[] = validate(manifest) ? [] : (validate.errors ?? []).map((error) => problemOf(error, prefix));
  const flagged = (path: string) => problems.some((problem) => problem.path === path || problem.path.startsWith(`${path}/`));
  const add = (path: string, message: string) => problems.push({ path, message });
  if (manifest !== null && typeof manifest === 'object' && !Array.isArray(manifest)) {
    if (typeof manifest.endpoint === 'string' && !flagged(`${prefix}/endpoint`))
      for (const message of endpointProblems(manifest.endpoint, settings)) add(`${prefix}/endpoint`, message);
    if (Array.isArray(manifest.operations)) operationProblems(manifest, prefix, flagged, add);
  }
  return problems.length === 0 ? { ok: true, manifest } : { ok: false, problems };
}

function operationProblems(manifest: Manifest, prefix: string, flagged: (path: string) => boolean, add: (path: string, message: string) => void) {
  const schemas = newAjv(false);
  const seen = new Map<string, number>();
  manifest.operations.forEach((operation, index) => {
    const at = `${prefix}/operations/${index}`;
    if (operation === null || typeof operation !== 'object') return;
    if (typeof operation.name === 'string') {
      const first = seen.get(operation.name);
      if (first !== undefined) add(`${at}/name`, `duplicates the name of operation ${first}`);
      else seen.set(operation.name, index);
    }
    for (const which of ['input_schema', 'output_schema'] as const) {
      const schema = operation[which];
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || flagged(`${at}/${which}`)) continue;
      try {
        // A fresh instance per manifest: compiled schemas are cached by the instance, and these are the developer's.
        schemas.compile(schema);
      } catch (error) {
        add(`${at}/${which}`, `is not a JSON Schema Ajv (draft 2020-12) compiles: ${(error as Error).message}`);
      }
    }
    if (typeof operation.path === 'string' && operation.path.split('/').some((segment) => segment === '..' || segment === '.'))
      add(`${at}/path`, 'must not contain . or .. segments');
    const pricing = operation.pricing;
    if (pricing === null || typeof pricing !== 'object' || flagged(`${at}/pricing/price_per_unit`)) return;
    const price = parseAmount(pricing.price_per_unit);
    if (!price.ok) add(`${at}/pricing/price_per_unit`, price.reason);
    else if (Number.isInteger(pricing.max_units) && price.micros * BigInt(pricing.max_units) > maxAmountMicros)
      add(`${at}/pricing`, 'price_per_unit × max_units is above the largest amount a call may cost (1000000000)');
  });
}
