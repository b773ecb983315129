import { createHash } from 'node:crypto';
import { type JsonClient, JsonClientError } from '@platform/kit/http/json-client';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ManifestOperation } from '../listings/manifest-types.ts';

/** What a provider call came to: the result and units it reported, or why it failed (the caller then pays nothing). */
export type ProviderOutcome =
  | { ok: true; result: unknown; units: bigint; latencyMs: number }
  | { ok: false; reason: 'provider_timeout' | 'provider_error' | 'provider_unreachable' | 'provider_bad_answer'; message: string; latencyMs: number };

/** The text the marketplace signs on every provider call, so a provider can tell its calls come from us. */
export const providerCallDomain = 'platform-marketplace-call-v1\n';

// Draft 2020-12, as the manifest's schemas are checked at publish (listings/manifest-schema.ts).
const ajv = new Ajv2020({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false, validateFormats: false });
const validators = new Map<string, ValidateFunction>();

/** A compiled JSON schema, kept by the manifest it came from (schemas never change under one manifest hash). */
export function validatorFor(manifestHash: string, operation: string, which: 'input' | 'output', schema: Record<string, unknown>): ValidateFunction {
  const key = `${manifestHash}:${operation}:${which}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
    // Bounded: a marketplace with many listings keeps the recent ones.
    if (validators.size > 10_000) validators.delete(validators.keys().next().value as string);
  }
  return validate;
}

/** The first problem of a failed validation, as `/path message`. */
export function firstProblem(validate: ValidateFunction): string {
  const error = validate.errors?.[0];
  return error ? `${error.instancePath || '/'} ${error.message ?? 'is invalid'}` : 'is invalid';
}

/**
 * Calls an operation of a provider: `POST <endpoint><path>` with `{invocation_id, operation, args, caller_did,
 * max_units, unit}`, signed by the marketplace (`X-Marketplace-Signature`: ed25519 by the marketplace DID's key
 * over `platform-marketplace-call-v1\n<invocation id>\n<sha256 hex of the body>`). The provider answers 200
 * `{result, units}`; `units` (an integer, default 1) may not pass `max_units`, and `result` must match the
 * operation's output schema. Anything else is a failure the caller does not pay for.
 */
export async function callProvider(
  client: JsonClient,
  signer: { did: string; sign(message: string): string | Promise<string> },
  call: {
    endpoint: string;
    manifestHash: string;
    operation: ManifestOperation;
    invocationId: string;
    callerDid: string;
    args: unknown;
    timeoutMs: number;
    now: () => number;
  },
): Promise<ProviderOutcome> {
  const { operation } = call;
  const body = {
    invocation_id: call.invocationId,
    operation: operation.name,
    args: call.args,
    caller_did: call.callerDid,
    max_units: operation.pricing.max_units,
    unit: operation.pricing.unit,
  };
  // Serialised once: the signature covers exactly the bytes sent.
  const bodyText = JSON.stringify(body);
  const digest = createHash('sha256').update(bodyText).digest('hex');
  const url = new URL(`${call.endpoint.replace(/\/+$/, '')}${operation.path ?? `/${operation.name}`}`);
  const signature = await signer.sign(`${providerCallDomain}${call.invocationId}\n${digest}`);
  const started = call.now();
  const elapsed = () => call.now() - started;
  let answer: Awaited<ReturnType<JsonClient['request']>>;
  try {
    answer = await client.request('POST', url, {
      bodyText,
      timeoutMs: call.timeoutMs,
      headers: { 'x-marketplace-invocation': call.invocationId, 'x-marketplace-did': signer.did, 'x-marketplace-signature': signature },
    });
  } catch (error) {
    if (error instanceof JsonClientError && error.kind === 'timeout')
      return { ok: false, reason: 'provider_timeout', message: `the provider did not answer within ${call.timeoutMs} ms`, latencyMs: elapsed() };
    return { ok: false, reason: 'provider_unreachable', message: `the provider could not be reached: ${(error as Error).message}`, latencyMs: elapsed() };
  }
  const latencyMs = elapsed();
  if (answer.status !== 200) return { ok: false, reason: 'provider_error', message: `the provider answered ${answer.status}`, latencyMs };
  const reply = answer.json as { result?: unknown; units?: unknown } | undefined;
  if (reply === undefined || typeof reply !== 'object' || reply === null || !('result' in reply))
    return { ok: false, reason: 'provider_bad_answer', message: 'the provider’s answer is not JSON with a `result`', latencyMs };
  const units = unitsOf(reply.units, operation.pricing.max_units);
  if (units === undefined)
    return { ok: false, reason: 'provider_bad_answer', message: `the provider reported units outside 0 … ${operation.pricing.max_units}`, latencyMs };
  const validate = validatorFor(call.manifestHash, operation.name, 'output', operation.output_schema);
  if (!validate(reply.result))
    return {
      ok: false,
      reason: 'provider_bad_answer',
      message: `the provider’s result does not match its output schema: ${firstProblem(validate)}`,
      latencyMs,
    };
  return { ok: true, result: reply.result, units, latencyMs };
}

function unitsOf(value: unknown, max: number): bigint | undefined {
  if (value === undefined) return 1n;
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value : '';
  if (!/^(0|[1-9][0-9]{0,17})$/.test(text)) return undefined;
  const units = BigInt(text);
  return units <= BigInt(max) ? units : undefined;
}
