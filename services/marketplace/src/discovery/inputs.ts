import { invalidRequest } from '@platform/kit/errors';
import { maxAmountMicros } from '@platform/kit/money';
import { limits } from '../limits.ts';
import { type ManifestKind, manifestKinds } from '../listings/manifest-types.ts';
import { maxQueryChars } from './text-query.ts';

/** Discovery's parameters, checked one by one with a message naming the field (the same rules for GET and POST). */

export interface DiscoveryFilters {
  kind?: ManifestKind;
  /** Highest acceptable price per unit of the listing's cheapest operation, in micros of the settlement unit. */
  maxPriceMicros?: bigint;
  /** Lowest acceptable `quality_score`, in thousandths (its shown precision). */
  minQualityThousandths?: number;
  minUptimeBps?: number;
  confidential?: boolean;
}

const field = (name: string, message: string) => invalidRequest(`${name} ${message}`, { field: name });

export function limitInput(raw: string | number | undefined): number {
  if (raw === undefined) return limits.pageDefault;
  const value = typeof raw === 'number' ? raw : /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < 1 || value > limits.pageMax) throw field('limit', `must be an integer from 1 to ${limits.pageMax}`);
  return value;
}

export function queryInput(raw: string | undefined, name = 'query'): string {
  if (raw === undefined) return '';
  if (raw.length > maxQueryChars) throw field(name, `must be at most ${maxQueryChars} characters`);
  return raw;
}

export function kindInput(raw: string | undefined): ManifestKind | undefined {
  if (raw === undefined) return undefined;
  if (!(manifestKinds as readonly string[]).includes(raw)) throw field('kind', `must be one of ${manifestKinds.join(', ')}`);
  return raw as ManifestKind;
}

/**
 * `max_price_wei`: the spec calls it wei and types it a decimal string; the settlement unit has 6 decimals, so its
 * smallest unit (its "wei") is the micro: an integer string, "1500" = 0.001500 per unit.
 */
export function maxPriceInput(raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  if (!/^(0|[1-9]\d{0,15})$/.test(raw) || BigInt(raw) > maxAmountMicros)
    throw field(
      'max_price_wei',
      `must be a whole number of the settlement unit's smallest unit (10^-6; "1500" is 0.001500 per unit), from 0 to ${maxAmountMicros}`,
    );
  return BigInt(raw);
}

export function minQualityInput(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const match = /^(0|1)(?:\.(\d{1,3}))?$/.exec(raw);
  const thousandths = match ? Number(match[1]) * 1000 + Number((match[2] ?? '').padEnd(3, '0')) : Number.NaN;
  if (!(thousandths >= 0 && thousandths <= 1000)) throw field('min_quality', 'must be a decimal string from 0 to 1 with at most 3 places, e.g. "0.900"');
  return thousandths;
}

export function minUptimeInput(raw: string | number | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < 0 || value > 10_000) throw field('min_uptime_bps', 'must be an integer from 0 to 10000');
  return value;
}

export function confidentialInput(raw: string | boolean | undefined): boolean | undefined {
  if (raw === undefined || typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw field('confidential', 'must be true or false');
}

export interface RawFilters {
  kind?: string | undefined;
  max_price_wei?: string | undefined;
  min_quality?: string | undefined;
  min_uptime_bps?: string | number | undefined;
  confidential?: string | boolean | undefined;
}

export function filtersInput(raw: RawFilters): DiscoveryFilters {
  const filters: DiscoveryFilters = {};
  const kind = kindInput(raw.kind);
  const maxPriceMicros = maxPriceInput(raw.max_price_wei);
  const minQualityThousandths = minQualityInput(raw.min_quality);
  const minUptimeBps = minUptimeInput(raw.min_uptime_bps);
  const confidential = confidentialInput(raw.confidential);
  if (kind !== undefined) filters.kind = kind;
  if (maxPriceMicros !== undefined) filters.maxPriceMicros = maxPriceMicros;
  if (minQualityThousandths !== undefined) filters.minQualityThousandths = minQualityThousandths;
  if (minUptimeBps !== undefined) filters.minUptimeBps = minUptimeBps;
  if (confidential !== undefined) filters.confidential = confidential;
  return filters;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function serviceIdInput(raw: string): string {
  if (!uuid.test(raw)) throw field('id', 'must be a service id (a UUID)');
  return raw.toLowerCase();
}
