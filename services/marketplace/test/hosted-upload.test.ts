import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { hostedLimits } from '../src/hosting/hosted-limits.ts';
import { type Developer, signIn } from './developer-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';
import { hostedManifest, upload, uploadBody } from './hosted-fixtures.ts';

const moduleOf = (bytes: number) => `//${'x'.repeat(bytes - 2)}`;
const main = 'export default { fetch: () => new Response("ok") };\n';

for (const engine of testEngines()) {
  describe(`hosted uploads at and past each limit on ${engine.name}`, () => {
    let market: Marketplace;
    let developer: Developer;
    let serviceId: string;
    before(async () => {
      market = await startMarketplace(engine, { env: { MARKETPLACE_ALLOW_PRIVATE_ENDPOINTS: 'false' } });
      developer = await signIn(market);
      serviceId = (await market.call('POST', '/v1/services', { headers: developer.headers, body: { manifest: hostedManifest() } })).body.data.id;
    });
    after(async () => market.close());

    const stored = async () => (await market.database.db.selectFrom('hosted_artifacts').select('id').where('listing_id', '=', serviceId).execute()).length;
    const refusedWith = async (metadata: unknown, modules: Record<string, string>, pattern: RegExp) => {
      const answer = await upload(market, developer.headers, serviceId, metadata, modules);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error, 'invalid_request');
      assert.match(answer.body.message, pattern);
    };

    test('the whole upload: exactly the limit is stored, a byte past it is 413 and stores nothing', async () => {
      const modules = { 'main.js': main, 'a.js': moduleOf(hostedLimits.moduleBytes), 'b.js': moduleOf(hostedLimits.moduleBytes), 'c.js': '//' };
      const overhead = (await uploadBody({ main_module: 'main.js' }, modules)).body.length - 2;
      modules['c.js'] = moduleOf(hostedLimits.uploadBytes - overhead);
      const exact = await uploadBody({ main_module: 'main.js' }, modules);
      assert.equal(exact.body.length, hostedLimits.uploadBytes);
      const before = await stored();
      const taken = await market.call('POST', `/v1/services/${serviceId}/artifacts`, {
        headers: { ...developer.headers, 'content-type': exact.contentType },
        body: exact.body,
      });
      assert.equal(taken.status, 201, JSON.stringify(taken.body));
      assert.equal(taken.body.data.size_bytes > 10_000_000, true);
      modules['c.js'] += 'x';
      const past = await uploadBody({ main_module: 'main.js' }, modules);
      const refused = await market.call('POST', `/v1/services/${serviceId}/artifacts`, {
        headers: { ...developer.headers, 'content-type': past.contentType },
        body: past.body,
      });
      assert.equal(refused.status, 413, JSON.stringify(refused.body));
      assert.equal(await stored(), before + 1);
    });

    test('a module: exactly its limit is taken, a byte past it is refused naming it', async () => {
      assert.equal(
        (await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, { 'main.js': main, 'big.js': moduleOf(hostedLimits.moduleBytes) }))
          .status,
        201,
      );
      await refusedWith({ main_module: 'main.js' }, { 'main.js': main, 'big.js': moduleOf(hostedLimits.moduleBytes + 1) }, /module big\.js is 4194305 bytes/);
    });

    test('parts: the metadata and 64 modules are taken, one more is refused', async () => {
      const modules: Record<string, string> = { 'main.js': main };
      for (let index = 1; index < hostedLimits.parts - 1; index++) modules[`m${index}.js`] = `export const n = ${index};\n`;
      assert.equal((await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, modules)).status, 201);
      await refusedWith({ main_module: 'main.js' }, { ...modules, 'extra.js': 'export const extra = 1;\n' }, /at most 65 parts/);
    });

    test('names: 128 characters are taken, 129, a path out of the upload, and other file kinds are refused', async () => {
      const at = `${'n'.repeat(hostedLimits.moduleNameLength - 3)}.js`;
      assert.equal((await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, { 'main.js': main, [at]: main })).status, 201);
      await refusedWith({ main_module: 'main.js' }, { 'main.js': main, [`n${at}`]: main }, /at most 128 characters/);
      await refusedWith({ main_module: 'main.js' }, { 'main.js': main, '../up.js': main }, /not a relative path/);
      await refusedWith({ main_module: 'main.js' }, { 'main.js': main, 'notes.txt': 'hi' }, /ending \.js, \.mjs or \.wasm/);
    });

    test('metadata: its own limit, a main module not uploaded, unknown members, bindings and hosts each refused clearly', async () => {
      await refusedWith(
        { main_module: 'main.js', bindings: [{ type: 'plain_text', name: 'PAD', text: 'x'.repeat(hostedLimits.metadataBytes) }] },
        { 'main.js': main },
        /metadata part is over 65536 bytes/,
      );
      await refusedWith({ main_module: 'index.js' }, { 'main.js': main }, /main_module index\.js is not among the uploaded modules/);
      await refusedWith({ main_module: 'main.js', routes: [] }, { 'main.js': main }, /metadata member "routes" is not known/);
      await refusedWith({ main_module: 'main.js', compatibility_date: '2099-01-01' }, { 'main.js': main }, /compatibility_date must be between/);
      const twice = [
        { type: 'plain_text', name: 'A', text: '1' },
        { type: 'secret_text', name: 'A', text: '2' },
      ];
      await refusedWith({ main_module: 'main.js', bindings: twice }, { 'main.js': main }, /binding A is named twice/);
      await refusedWith({ main_module: 'main.js', egress_allowlist: ['127.0.0.1'] }, { 'main.js': main }, /loopback or private address/);
      await refusedWith({ main_module: 'main.js', egress_allowlist: ['not a host'] }, { 'main.js': main }, /must be a host name/);
      const noMetadata = await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, {});
      assert.equal(noMetadata.status, 400);
    });

    test('the same bytes twice are one artifact; a listing that names an endpoint is not hosted', async () => {
      const first = await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, { 'main.js': main });
      const second = await upload(market, developer.headers, serviceId, { main_module: 'main.js' }, { 'main.js': main });
      assert.equal(second.status, 200);
      assert.equal(second.body.data.id, first.body.data.id);
      const external = (
        await market.call('POST', '/v1/services', {
          headers: developer.headers,
          body: { manifest: { ...hostedManifest(), endpoint: 'https://api.example.com' } },
        })
      ).body.data.id;
      const refused = await upload(market, developer.headers, external, { main_module: 'main.js' }, { 'main.js': main });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.detail.reason, 'listing_not_hosted');
    });
  });
}
