import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalHash } from '@platform/kit/canonical-json';
import { type ModelPrice, maxUsdPico, parseDecimal12 } from '../metering/credit.ts';
import { isModelId } from '../models/model-policy.ts';

/** One rate card version as the gateway prices with it. */
export interface RateCard {
  readonly version: number;
  /** The credit reference: how many USD one credit stands for, in pico-USD. */
  readonly usdPerCreditPico: bigint;
  readonly prices: ReadonlyMap<string, ModelPrice>;
}

export interface RateCardSource {
  card: RateCard;
  /** SHA-256 of the normalised content: equal for the same prices however the file is spaced or spelled. */
  contentSha256: string;
  source: string;
}

const fileName = /^v([1-9][0-9]{0,8})\.json$/;
const topLevel = new Set(['version', 'usd_per_credit', 'models', 'description', 'published']);
const priceFields = new Set(['input_usd_per_mtok', 'output_usd_per_mtok']);

function fail(source: string, message: string): never {
  throw new Error(`rate card ${source}: ${message}`);
}

function usd(source: string, field: string, value: unknown, allowZero: boolean): bigint {
  const parsed = parseDecimal12(value, field, maxUsdPico);
  if (!parsed.ok) fail(source, parsed.reason);
  if (!allowZero && parsed.value === 0n) fail(source, `${field} must be above zero`);
  return parsed.value;
}

/**
 * Reads and checks one card: `{version, usd_per_credit, models: {<id>: {input_usd_per_mtok, output_usd_per_mtok}}}`
 * with USD figures as decimal strings (at most 12 places). Unknown fields are refused, so a typo cannot silently
 * leave a price out. An embedding model has an output price of "0".
 */
export function parseRateCard(text: string, source: string, expectedVersion?: number): RateCardSource {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    fail(source, `not valid JSON (${(error as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail(source, 'must be a JSON object');
  const record = json as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!topLevel.has(key)) fail(source, `unknown field "${key}"`);
  const version = record.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1 || version > 999_999_999) fail(source, 'version must be a positive integer');
  if (expectedVersion !== undefined && version !== expectedVersion) fail(source, `version is ${version} but the file name says ${expectedVersion}`);
  const usdPerCreditPico = usd(source, 'usd_per_credit', record.usd_per_credit, false);
  const models = record.models;
  if (typeof models !== 'object' || models === null || Array.isArray(models)) fail(source, 'models must be an object of model id to prices');
  const prices = new Map<string, ModelPrice>();
  for (const [model, price] of Object.entries(models as Record<string, unknown>)) {
    if (!isModelId(model)) fail(source, `model "${model}" is not of the form accounts/<provider>/models/<model>`);
    if (typeof price !== 'object' || price === null) fail(source, `${model} must map to {input_usd_per_mtok, output_usd_per_mtok}`);
    const fields = price as Record<string, unknown>;
    for (const key of Object.keys(fields)) if (!priceFields.has(key)) fail(source, `${model}: unknown field "${key}"`);
    prices.set(model, {
      inputPicoUsdPerMTok: usd(source, `${model} input_usd_per_mtok`, fields.input_usd_per_mtok, true),
      outputPicoUsdPerMTok: usd(source, `${model} output_usd_per_mtok`, fields.output_usd_per_mtok, true),
    });
  }
  if (prices.size === 0) fail(source, 'prices no model');
  const card: RateCard = { version, usdPerCreditPico, prices };
  return { card, contentSha256: cardDigest(card), source };
}

/** The digest of what prices calls, not of the file's bytes: reformatting a published file is not an edit. */
export function cardDigest(card: RateCard): string {
  const models = Object.fromEntries(
    [...card.prices].map(([model, price]) => [model, [price.inputPicoUsdPerMTok.toString(), price.outputPicoUsdPerMTok.toString()]]),
  );
  const normal = { version: card.version, usd_per_credit_pico: card.usdPerCreditPico.toString(), models };
  return canonicalHash(normal);
}

/** Every `v<N>.json` in the folder, in version order; any other file name is ignored. */
export function readRateCardDir(dir: string): RateCardSource[] {
  const cards: RateCardSource[] = [];
  for (const name of readdirSync(dir).sort()) {
    const match = fileName.exec(name);
    if (!match) continue;
    cards.push(parseRateCard(readFileSync(path.join(dir, name), 'utf8'), name, Number(match[1])));
  }
  if (cards.length === 0) throw new Error(`no rate card (v<N>.json) in ${dir}`);
  return cards.sort((a, b) => a.card.version - b.card.version);
}
