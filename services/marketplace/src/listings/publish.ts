import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ListingTable, MarketplaceSchema } from '../db/schema.ts';
import { conflict } from '../http/errors.ts';
import { RegistryError, type ServiceRegistryClient } from '../registry/registry-client.ts';
import { type ListingAction, move } from './listing-states.ts';
import { findListing, setRegistry, updateListingIf } from './listings.repository.ts';
import { checkManifest, type ManifestSettings } from './manifest-schema.ts';

export interface StateDeps {
  db: Kysely<MarketplaceSchema>;
  clock: Clock;
  logger: Logger;
  settings: ManifestSettings;
  /** The chain registry; undefined without MARKETPLACE_RPC_URL (listings are then published unregistered). */
  registry: ServiceRegistryClient | undefined;
}

const needsRegistration = (row: ListingTable) => row.registry_status !== 'registered' || row.registry_manifest_hash !== row.manifest_hash;

/**
 * Moves a listing (owner already checked) and returns nothing: the route reads the listing back. Publishing
 * validates the stored manifest again (settings may have changed since it was saved), then registers it on chain
 * when a registry is configured and the chain does not hold this manifest yet, and only then sets `active`.
 */
export async function changeState(deps: StateDeps, row: ListingTable, action: ListingAction): Promise<void> {
  const step = move(row.status, action);
  if (!step.ok) throw conflict(step.reason, 'invalid_transition', { status: row.status, action });
  if (action === 'publish') {
    const check = checkManifest(row.manifest, deps.settings, '/manifest');
    if (!check.ok)
      throw new ServiceError('invalid_request', 'the stored manifest no longer validates; PATCH it first', { details: { problems: check.problems } });
    // A hosted listing (no endpoint) takes calls only through a running deployment.
    if (row.manifest.endpoint === undefined && !row.hosted_deployment_id)
      throw conflict('a hosted listing is published once a deployment of it is running: upload an artifact and deploy it first', 'no_running_deployment');
    if (deps.registry && needsRegistration(row)) await register(deps, deps.registry, row);
  }
  if (step.unchanged) return;
  const changed = await updateListingIf(
    deps.db,
    deps.clock,
    row.id,
    { status: row.status },
    {
      status: step.to,
      ...(action === 'publish' && row.published_at === null ? { published_at: deps.clock.sqlNow() as unknown as Date } : {}),
    },
  );
  if (!changed) {
    // Another request moved it first: the same move (two publishes racing) is done; anything else is a clash.
    const now = await findListing(deps.db, row.id);
    if (now?.status === step.to) return;
    throw conflict(`the listing changed meanwhile (it is now ${now?.status ?? 'gone'}); read it and try again`, 'concurrent_change');
  }
}

async function register(deps: StateDeps, registry: ServiceRegistryClient, row: ListingTable): Promise<void> {
  await setRegistry(deps.db, row.id, { registry_status: 'pending', registry_tx_hash: null, registry_block: null });
  try {
    const done = await registry.register({ listingId: row.id, manifestHash: row.manifest_hash, owner: row.owner_address }, (hash) =>
      setRegistry(deps.db, row.id, { registry_tx_hash: hash }),
    );
    await setRegistry(deps.db, row.id, {
      registry_status: 'registered',
      registry_tx_hash: done.txHash,
      registry_block: done.block,
      registry_manifest_hash: done.manifestHash,
    });
  } catch (error) {
    await setRegistry(deps.db, row.id, { registry_status: 'failed' });
    if (!(error instanceof RegistryError)) throw error;
    deps.logger.warn({ listing: row.id, reason: error.message }, 'registering a listing on chain failed');
    throw new ServiceError('unavailable', `the listing was not published: ${error.message}`, {
      retryable: error.retryable,
      details: { reason: 'registry_failed' },
    });
  }
}
