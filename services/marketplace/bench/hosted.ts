import { MarketplaceDeveloperClient } from '@platform/client/marketplace-developer-client';
import { openDatabase } from '@platform/kit/db/open-database';
import { silentLogger } from '@platform/testkit/databases';
import { findDescendant, residentBytes } from '@platform/testkit/process-tree';
import { configServing, startWorkerd } from '@platform/testkit/workerd-process';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { MarketplaceSchema } from '../src/db/schema.ts';
import type { Manifest } from '../src/listings/manifest-types.ts';
import { providerManifest, seedActiveListing } from '../test/paid-fixtures.ts';
import type { PaidWorld } from './paid-world.ts';

/*
 * Hosted mode's bench, in the paid world (settlement and the marketplace in processes of their own, the marketplace's
 * workerd below it):
 *  - upload-to-running: a developer's upload and deploy (build, hand over, readiness probe) until the answer says
 *    running, each time new bytes;
 *  - the same Worker code as a hosted listing and as an external provider (the Worker served by a workerd of the
 *    bench's own on loopback), one paid voucher call in flight: what hosting adds to a call;
 *  - how many running deployments one workerd holds: deployments of the Worker, each called once (so each has its
 *    isolate), and workerd's resident memory before and after.
 */
export const echoWorker = `export default {
  async fetch(request) {
    const call = await request.json();
    return Response.json({ result: { echo: call.args }, units: 1 });
  },
};
`;

const hostedManifest = (): Manifest => {
  const { endpoint: _external, ...rest } = providerManifest('https://unused.example.com');
  return { ...rest, display_name: 'Hosted echo (bench)' };
};

export interface HostedBench {
  uploadToRunning: number[];
  external: string;
  hostedServiceId: string;
  deployments: number;
  workerdBytesBefore: number;
  workerdBytesAfter: number;
}

export async function benchHosted(
  world: PaidWorld,
  databaseUrl: string,
  options: { deploys: number; capacity: number },
): Promise<HostedBench & { stop(): Promise<void> }> {
  const developer = new MarketplaceDeveloperClient({ baseUrl: world.marketplace.url, signer: privateKeyToAccount(generatePrivateKey()) });
  const hosted = await developer.createListing(hostedManifest());
  const deploy = async (serviceId: string, n: number) => {
    const artifact = await developer.uploadArtifact(serviceId, { main_module: 'main.js' }, { 'main.js': new TextEncoder().encode(`${echoWorker}// ${n}\n`) });
    const deployment = await developer.deploy(serviceId, { artifact_id: artifact.id });
    if (deployment.status !== 'running') throw new Error(`a bench deployment failed: ${deployment.failure}`);
    return deployment;
  };
  await deploy(hosted.id, -1);
  const uploadToRunning: number[] = [];
  for (let n = 0; n < options.deploys; n++) {
    const started = performance.now();
    await deploy(hosted.id, n);
    uploadToRunning.push(performance.now() - started);
  }
  await developer.publish(hosted.id);

  // The peer: the same Worker code, served by workerd on loopback and listed with its endpoint.
  const peer = await startWorkerd({ 'main.js': echoWorker }, (port) => configServing('main.js', port));
  const database = await openDatabase<MarketplaceSchema>({ url: databaseUrl, schema: 'marketplace', logger: silentLogger });
  const external = await seedActiveListing(database.db, providerManifest(peer.url));
  await database.close();

  // Capacity: listings each with one running deployment, each called once, against workerd's memory.
  const workerd = await findDescendant(world.marketplace.process.pid as number, 'workerd');
  if (workerd === undefined) throw new Error('no workerd below the marketplace');
  const workerdBytesBefore = await residentBytes(workerd);
  const caller = world.callers[0];
  if (!caller) throw new Error('the bench has no caller');
  for (let n = 0; n < options.capacity; n++) {
    const listing = await developer.createListing({ ...hostedManifest(), display_name: `Hosted echo ${n}` });
    await deploy(listing.id, n);
    await developer.publish(listing.id);
    await caller.market.invoke(listing.id, { operation: 'echo', args: { n } });
  }
  const workerdBytesAfter = await residentBytes(workerd);
  return {
    uploadToRunning,
    external,
    hostedServiceId: hosted.id,
    deployments: options.capacity,
    workerdBytesBefore,
    workerdBytesAfter,
    stop: () => peer.stop(),
  };
}
