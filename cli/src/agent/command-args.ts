import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { parseDid } from '@platform/kit/auth/did';
import { parseAmount } from '@platform/kit/money';
import { UsageError } from './command-output.ts';

/** Every command takes `--json`; `--url` is added by the commands that call a service. */
const common = { json: { type: 'boolean' } } as const satisfies ParseArgsOptionsConfig;

/**
 * Node's own parser, strict: an unknown option or a missing value is a usage error (exit 2), never ignored, so a
 * typo such as `--max-paymnet` cannot turn into a call without its guard.
 */
export function parseCommand<T extends ParseArgsOptionsConfig>(args: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...args], options: { ...common, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages go on with advice on `--` and dashes over more sentences and lines: the first says it.
    const first = (error as Error).message.split('\n')[0]?.split('. ')[0] ?? 'bad arguments';
    throw new UsageError(first.replace(/\.$/, ''));
  }
}

/** The positionals, exactly `count` of them (or at least `count` with `rest`), else the usage line. */
export function positionals(values: readonly string[], count: number, usage: string, options: { rest?: boolean } = {}): string[] {
  if (values.length < count || (!options.rest && values.length > count)) throw new UsageError(`usage: ${usage}`);
  return [...values];
}

/** A settlement amount: a decimal string of at most 6 places, above zero. */
export function amountArgument(value: string, name = 'amount'): string {
  const parsed = parseAmount(value);
  if (!parsed.ok) throw new UsageError(parsed.reason.replace(/^amount/, name));
  return value;
}

export function didArgument(value: string, name: string): string {
  if (!parseDid(value)) throw new UsageError(`${name} must be an agent DID, did:platform:<user id>:<16 hex>`);
  return value;
}

export function integerArgument(value: string | undefined, name: string, range: { min: number; max: number }): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < range.min || number > range.max) throw new UsageError(`${name} must be an integer from ${range.min} to ${range.max}`);
  return number;
}

/** A JSON object given on the command line (`--args '{"units":2}'`). */
export function jsonObjectArgument(value: string | undefined, name: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`${name} must be a JSON object, e.g. '{"text":"hi"}'`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`${name} must be a JSON object`);
  return parsed as Record<string, unknown>;
}
