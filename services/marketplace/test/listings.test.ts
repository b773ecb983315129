import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { manifestHash } from '../src/listings/manifest-types.ts';
import { createListing, type Developer, publishListing, signIn, testManifest, testOperation } from './developer-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

const payoutDid = 'did:platform:alice:0123456789abcdef';

for (const engine of testEngines()) {
  describe(`listings on ${engine.name}`, () => {
    let m: Marketplace;
    let dev: Developer;
    let other: Developer;
    before(async () => {
      m = await startMarketplace(engine);
      dev = await signIn(m);
      other = await signIn(m);
    });
    after(async () => m.close());

    const act = (id: string, action: string, developer = dev, headers: Record<string, string> = {}) =>
      m.call('POST', `/v1/services/${id}/${action}`, { headers: { ...developer.headers, ...headers } });

    test('GET /v1/manifest-schema is public, a 2020-12 schema the test manifest passes', async () => {
      const got = await m.call('GET', '/v1/manifest-schema');
      assert.equal(got.status, 200);
      assert.equal(got.body.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.equal(got.body.properties.timeout_ms.maximum, m.config.providerTimeoutMs);
      const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(got.body);
      assert.equal(validate(testManifest()), true, JSON.stringify(validate.errors));
      assert.equal(validate({ ...testManifest(), version: 2 }), false);
    });

    test('a draft has the spec’s fields, the owner, the manifest with defaults and its hash', async () => {
      const { tags: _tags, confidential: _confidential, ...bare } = testManifest();
      const listing = await createListing(m, dev, { manifest: bare as never, payout_did: payoutDid });
      assert.equal(listing.status, 'draft');
      assert.equal(listing.slug, 'weather-now');
      assert.equal(listing.display_name, 'Weather Now');
      assert.equal(listing.kind, 'api');
      assert.equal(listing.owner_address, dev.address);
      assert.equal(listing.payout_did, payoutDid);
      assert.equal(listing.pricing_version, 1);
      assert.deepEqual(listing.manifest.tags, []);
      assert.equal(listing.manifest.confidential, false);
      assert.equal(listing.manifest_hash, manifestHash(listing.manifest));
      assert.deepEqual(listing.operations, [{ name: 'run', description: 'Runs the thing', unit: 'call', price_per_unit: '0.002', max_units: 1 }]);
      assert.deepEqual(listing.registry, { status: 'none', tx_hash: null, block: null, manifest_hash: null });
      for (const field of ['quality_score', 'uptime_bps']) assert.ok(field in listing, field);
    });

    test('slugs: a chosen one taken is 409; a derived one taken gets a piece of the id; malformed is 400', async () => {
      await createListing(m, dev, { slug: 'taken-slug' });
      const clash = await m.call('POST', '/v1/services', { headers: other.headers, body: { slug: 'taken-slug', manifest: testManifest() } });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.error, 'conflict');
      assert.equal(clash.body.detail.reason, 'slug_taken');
      const manifest = testManifest({ display_name: 'Same Name' });
      const first = await createListing(m, dev, { manifest });
      const second = await createListing(m, other, { manifest });
      assert.equal(first.slug, 'same-name');
      assert.equal(second.slug, `same-name-${second.id.slice(-8)}`);
      for (const slug of ['A', 'has space', '-dash', '01937a4b-7c3e-7f00-8f00-0123456789ab']) {
        const bad = await m.call('POST', '/v1/services', { headers: dev.headers, body: { slug, manifest: testManifest() } });
        assert.equal(bad.status, 400, slug);
        assert.equal(bad.body.detail.problems[0].path, '/slug');
      }
    });

    test('an invalid manifest is 400 with every problem and its JSON pointer', async () => {
      const manifest = {
        ...testManifest(),
        kind: 'robot',
        endpoint: 'ftp://files.example.com',
        timeout_ms: 10 ** 9,
        colour: 'blue',
        operations: [
          testOperation({ pricing: { unit: 'call', price_per_unit: '0.0000001', max_units: 1 } }),
          testOperation({ input_schema: { type: 'strange' } }),
          testOperation({ name: 'other', pricing: { unit: 'call', price_per_unit: '1', max_units: 0 } }),
        ],
      };
      const refused = await m.call('POST', '/v1/services', { headers: dev.headers, body: { manifest } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'invalid_request');
      const paths = (refused.body.detail.problems as { path: string }[]).map((problem) => problem.path).sort();
      assert.deepEqual(paths, [
        '/manifest/colour',
        '/manifest/endpoint',
        '/manifest/kind',
        '/manifest/operations/0/pricing/price_per_unit',
        '/manifest/operations/1/input_schema',
        '/manifest/operations/1/name',
        '/manifest/operations/2/pricing/max_units',
        '/manifest/timeout_ms',
      ]);
      const missing = await m.call('POST', '/v1/services', { headers: dev.headers, body: { manifest: { version: 1 } } });
      const missingPaths = (missing.body.detail.problems as { path: string }[]).map((problem) => problem.path);
      for (const field of ['display_name', 'summary', 'kind', 'operations']) assert.ok(missingPaths.includes(`/manifest/${field}`), field);
      // A manifest without an endpoint is a hosted listing's: its calls go to its running deployment.
      assert.ok(!missingPaths.includes('/manifest/endpoint'));
      const badDid = await m.call('POST', '/v1/services', { headers: dev.headers, body: { manifest: testManifest(), payout_did: 'alice' } });
      assert.equal(badDid.status, 400);
      assert.equal(badDid.body.detail.problems[0].path, '/payout_did');
    });

    test('PATCH: owner only; pricing changes bump pricing_version, other changes do not', async () => {
      const listing = await createListing(m, dev, { slug: 'patch-me' });
      const url = `/v1/services/${listing.id}`;
      const foreign = await m.call('PATCH', url, { headers: other.headers, body: { payout_did: payoutDid } });
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.error, 'forbidden');
      const unknown = await m.call('PATCH', '/v1/services/01937a4b-7c3e-7f00-8f00-0123456789ab', { headers: dev.headers, body: {} });
      assert.equal(unknown.status, 404);
      const described = await m.call('PATCH', url, { headers: dev.headers, body: { manifest: testManifest({ summary: 'Weather, now with wind' }) } });
      assert.equal(described.status, 200, JSON.stringify(described.body));
      assert.equal(described.body.data.summary, 'Weather, now with wind');
      assert.equal(described.body.data.pricing_version, 1);
      assert.notEqual(described.body.data.manifest_hash, listing.manifest_hash);
      const repriced = await m.call('PATCH', url, {
        headers: dev.headers,
        body: {
          manifest: testManifest({ operations: [testOperation({ pricing: { unit: 'call', price_per_unit: '0.003', max_units: 1 } })] }),
          payout_did: payoutDid,
        },
      });
      assert.equal(repriced.body.data.pricing_version, 2);
      assert.equal(repriced.body.data.payout_did, payoutDid);
      const added = await m.call('PATCH', url, {
        headers: dev.headers,
        body: { manifest: { ...repriced.body.data.manifest, operations: [...repriced.body.data.manifest.operations, testOperation({ name: 'forecast' })] } },
      });
      assert.equal(added.body.data.pricing_version, 3, 'a new priced operation is a pricing change');
      const row = await m.database.db
        .selectFrom('listings')
        .select(['search_document', 'manifest_hash'])
        .where('id', '=', listing.id)
        .executeTakeFirstOrThrow();
      assert.match(row.search_document, /forecast/);
      assert.equal(row.manifest_hash, added.body.data.manifest_hash);
      const invalid = await m.call('PATCH', url, { headers: dev.headers, body: { manifest: { ...testManifest(), operations: [] } } });
      assert.equal(invalid.status, 400);
      assert.equal(invalid.body.detail.problems[0].path, '/manifest/operations');
    });

    test('the state table: refused moves are 409, same-state moves 200 unchanged, delisted is final', async () => {
      const { id } = await createListing(m, dev);
      const expect = async (action: string, status: number, state?: string) => {
        const answer = await act(id, action);
        assert.equal(answer.status, status, `${action}: ${JSON.stringify(answer.body)}`);
        if (state) assert.equal(answer.body.data.status, state);
        if (status === 409) assert.equal(answer.body.detail.reason, 'invalid_transition');
        return answer;
      };
      await expect('pause', 409);
      const published = await expect('publish', 200, 'active');
      assert.ok(published.body.data.published_at);
      assert.equal(published.body.data.registry.status, 'none', 'no chain configured: published unregistered');
      await expect('publish', 200, 'active');
      await expect('pause', 200, 'paused');
      await expect('pause', 200, 'paused');
      await expect('publish', 200, 'active');
      assert.equal((await act(id, 'pause', other)).status, 403);
      await expect('delist', 200, 'delisted');
      await expect('delist', 200, 'delisted');
      await expect('publish', 409);
      await expect('pause', 409);
      const patch = await m.call('PATCH', `/v1/services/${id}`, { headers: dev.headers, body: { payout_did: payoutDid } });
      assert.equal(patch.status, 409);
      const draft = await createListing(m, dev);
      assert.equal((await act(draft.id, 'delist')).body.data.status, 'delisted', 'a draft can be withdrawn');
    });

    test('Idempotency-Key: the same create twice is one listing; the key on another request is 409', async () => {
      const headers = { ...dev.headers, 'idempotency-key': 'create-once-1' };
      const body = { manifest: testManifest({ display_name: 'Once Only' }) };
      const first = await m.call('POST', '/v1/services', { headers, body });
      const again = await m.call('POST', '/v1/services', { headers, body });
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.body.data.id, first.body.data.id);
      const rows = await m.database.db.selectFrom('listings').select('id').where('display_name', '=', 'Once Only').execute();
      assert.equal(rows.length, 1);
      const reused = await m.call('POST', '/v1/services', { headers, body: { manifest: testManifest({ display_name: 'Other' }) } });
      assert.equal(reused.status, 409);
      assert.equal(reused.body.detail.reason, 'idempotency_key_reused');
      const inBody = await m.call('POST', `/v1/services/${first.body.data.id}/publish`, { headers: dev.headers, body: { idempotency_key: 'publish-1' } });
      const inBodyAgain = await m.call('POST', `/v1/services/${first.body.data.id}/publish`, { headers: dev.headers, body: { idempotency_key: 'publish-1' } });
      assert.deepEqual(inBodyAgain.body, inBody.body);
    });

    test('two publishes racing both answer 200 active', async () => {
      const { id } = await createListing(m, dev);
      const answers = await Promise.all([act(id, 'publish'), act(id, 'publish')]);
      assert.deepEqual(
        answers.map((answer) => [answer.status, answer.body.data?.status]),
        [
          [200, 'active'],
          [200, 'active'],
        ],
      );
    });

    test('without MARKETPLACE_RPC_URL the registry is off and says so', async () => {
      const info = await m.call('GET', '/v1/registry');
      assert.equal(info.status, 200);
      assert.deepEqual(info.body.data, { enabled: false, address: null, operator: m.identity.signer.address });
    });

    test('publishListing fixture: create and publish in one step', async () => {
      const listing = await publishListing(m, other, { manifest: testManifest({ display_name: 'Fixture Check' }) });
      assert.equal(listing.status, 'active');
      assert.equal(listing.owner_address, other.address);
    });
  });

  describe(`manifest endpoints outside development on ${engine.name}`, () => {
    let m: Marketplace;
    let dev: Developer;
    before(async () => {
      m = await startMarketplace(engine, { env: { MARKETPLACE_DEV: 'false' } });
      dev = await signIn(m);
    });
    after(async () => m.close());

    const endpointProblems = async (endpoint: string) => {
      const answer = await m.call('POST', '/v1/services', { headers: dev.headers, body: { manifest: testManifest({ endpoint }) } });
      return answer.status === 201 ? [] : (answer.body.detail.problems as { path: string; message: string }[]).map((problem) => problem.message);
    };

    test('https is required; http only on loopback, and loopback only where private endpoints are allowed', async () => {
      assert.deepEqual(await endpointProblems('https://api.example.com/v2'), []);
      assert.match((await endpointProblems('http://api.example.com'))[0] ?? '', /must be https/);
      const loopback = await endpointProblems('http://127.0.0.1:8080');
      assert.deepEqual(loopback, ['names a loopback or private address, which this marketplace does not call']);
      assert.match((await endpointProblems('https://user:pw@api.example.com'))[0] ?? '', /credentials/);
      assert.match((await endpointProblems('https://10.1.2.3'))[0] ?? '', /private/);
    });
  });
}
