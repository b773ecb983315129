import { ServiceError } from '@platform/kit/errors';
import { monotonicUuidv7 } from '@platform/kit/ids';
import { formatAmount } from '@platform/kit/money';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { InvocationStatus, ListingStatus, MarketplaceSchema } from '../src/db/schema.ts';
import type { DeveloperAuth } from '../src/developers/developer-auth.ts';
import { type Manifest, type ManifestKind, manifestHash, searchDocumentOf } from '../src/listings/manifest-types.ts';

/*
 * Listings, stats and invocations written straight into the database: creating and publishing listings through
 * the API is the registry's work, and discovery's tests need exact control of text, prices and measured stats.
 */

export interface OperationSeed {
  name: string;
  description?: string;
  unit?: string;
  priceMicros: bigint;
  maxUnits?: number;
}

export interface ListingSeed {
  slug?: string;
  displayName: string;
  summary: string;
  kind?: ManifestKind;
  status?: ListingStatus;
  owner?: string;
  confidential?: boolean;
  tags?: string[];
  operations?: OperationSeed[];
  /** Measured stats; none: no listing_stats row (never called). `latencyMs` is the mean over `calls`. */
  stats?: { calls: number; successes: number; failures: number; latencyMs?: number } | undefined;
}

export const ownerAddress = '0x1111111111111111111111111111111111111111';
export const otherAddress = '0x2222222222222222222222222222222222222222';

export function manifestOf(seed: ListingSeed): Manifest {
  const operations = seed.operations ?? [{ name: 'run', priceMicros: 1_000n }];
  return {
    version: 1,
    display_name: seed.displayName,
    summary: seed.summary,
    kind: seed.kind ?? 'api',
    endpoint: 'https://provider.example.com',
    timeout_ms: 10_000,
    confidential: seed.confidential ?? false,
    tags: seed.tags ?? [],
    operations: operations.map((operation) => ({
      name: operation.name,
      description: operation.description ?? `The ${operation.name} operation`,
      input_schema: { type: 'object' },
      output_schema: { type: 'object' },
      pricing: { unit: operation.unit ?? 'call', price_per_unit: formatAmount(operation.priceMicros), max_units: operation.maxUnits ?? 1 },
    })),
  };
}

const batch = 500;

/** Inserts listings (and their stats) in order; returns their ids, which sort in insertion order. */
export async function insertListings(db: Kysely<MarketplaceSchema>, seeds: readonly ListingSeed[], now = new Date('2026-03-01T12:00:00Z')): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; offset < seeds.length; offset += batch) {
    const rows = seeds.slice(offset, offset + batch).map((seed, index) => {
      const manifest = manifestOf(seed);
      const id = monotonicUuidv7(now.getTime());
      ids.push(id);
      const status = seed.status ?? 'active';
      return {
        id,
        slug: seed.slug ?? `listing-${offset + index}-${id.slice(-8)}`,
        owner_address: seed.owner ?? ownerAddress,
        payout_did: null,
        display_name: seed.displayName,
        summary: seed.summary,
        kind: manifest.kind,
        status,
        manifest: JSON.stringify(manifest) as unknown as Manifest,
        manifest_hash: manifestHash(manifest),
        pricing_version: 1,
        search_document: searchDocumentOf(manifest),
        registry_status: 'none' as const,
        registry_tx_hash: null,
        registry_block: null,
        registry_manifest_hash: null,
        created_at: now,
        updated_at: now,
        published_at: status === 'draft' ? null : now,
      };
    });
    await db.insertInto('listings').values(rows).execute();
    const stats = seeds.slice(offset, offset + batch).flatMap((seed, index) => {
      if (!seed.stats) return [];
      const { calls, successes, failures, latencyMs = 0 } = seed.stats;
      return [
        {
          listing_id: rows[index]?.id as string,
          calls: BigInt(calls),
          successes: BigInt(successes),
          failures: BigInt(failures),
          latency_ms_total: BigInt(Math.round(latencyMs * calls)),
          last_call_at: calls > 0 ? now : null,
        },
      ];
    });
    if (stats.length > 0) await db.insertInto('listing_stats').values(stats).execute();
  }
  return ids;
}

export interface InvocationSeed {
  listingId: string;
  operation?: string;
  status: InvocationStatus;
  costMicros?: bigint;
  latencyMs?: number | null;
  startedAt: Date;
}

/** Invocations as the payment path would have left them (only the columns analytics reads carry meaning). */
export async function insertInvocations(db: Kysely<MarketplaceSchema>, seeds: readonly InvocationSeed[]): Promise<void> {
  for (let offset = 0; offset < seeds.length; offset += batch) {
    const rows = seeds.slice(offset, offset + batch).map((seed, index) => {
      const cost = seed.status === 'succeeded' ? (seed.costMicros ?? 0n) : 0n;
      return {
        id: monotonicUuidv7(seed.startedAt.getTime()),
        listing_id: seed.listingId,
        operation: seed.operation ?? 'run',
        caller_did: 'did:platform:caller:0123456789abcdef',
        idempotency_key: '',
        request_hash: `hash-${offset + index}`,
        rail: 'hold' as const,
        quote_id: null,
        status: seed.status,
        cap_micros: cost,
        cost_micros: cost,
        units: 1n,
        hold_id: null,
        channel_id: null,
        capture_seq: null,
        request_digest: '0x00',
        response_digest: null,
        response: null,
        error: null,
        latency_ms: seed.status === 'pending' ? null : (seed.latencyMs ?? null),
        started_at: seed.startedAt,
        finished_at: seed.status === 'pending' ? null : seed.startedAt,
        receipt: null,
      };
    });
    await db.insertInto('invocations').values(rows).execute();
  }
}

/** The header the test developer authentication reads: the developer's address, as a signed-in developer would be. */
export const testDeveloperHeader = 'x-test-developer';

/**
 * Stands in for the registry's developer authentication (SIWE tokens and wallet signatures, built elsewhere):
 * the address in `X-Test-Developer`, or 401 as the real one answers without credentials.
 */
export const headerDeveloperAuth: DeveloperAuth = {
  async authenticate(request: FastifyRequest) {
    const address = request.headers[testDeveloperHeader];
    if (typeof address !== 'string' || address === '') throw new ServiceError('unauthorized', 'missing developer credentials');
    return { address };
  },
};

export const asDeveloper = (address: string) => ({ headers: { [testDeveloperHeader]: address } });
