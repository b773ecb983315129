import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { vendorRedirect, vendorRedirects } from '../bin/vendor-bundles.js';

/*
 * The vendored bundles (scripts/vendor-bundles.mjs, cli/bin/vendor-bundles.js): what the install built is what a
 * process loads, each bundle exports what its package does, and a package the bundle no longer matches is left alone.
 */

const repo = fileURLToPath(new URL('../../', import.meta.url));
const hook = join(repo, 'cli', 'bin', 'vendor-bundles.js');
// What this install's bundles redirect (empty if the install built none, which the first test refuses).
const installed = vendorRedirects();
const specifiers = [...installed.keys()];
const packageOf = (specifier: string) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2) : specifier.split('/').slice(0, 1)).join('/');

/** Each specifier's resolved URL and sorted export names, in a fresh process with or without the hook. */
function loadEach(withHook: boolean): Record<string, { url: string; exports: string[] }> {
  const script = `const out = {};
    for (const specifier of ${JSON.stringify(specifiers)}) {
      const module = await import(specifier);
      out[specifier] = { url: import.meta.resolve(specifier), exports: Object.keys(module).sort() };
    }
    process.stdout.write(JSON.stringify(out));`;
  const args = [...(withHook ? ['--import', hook] : []), '--input-type=module', '-e', script];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

describe('vendored bundles', () => {
  test('every subpath of every vendored package loads from its bundle, with exactly the exports of the package itself', () => {
    assert.deepEqual([...new Set(specifiers.map(packageOf))].sort(), ['kysely', 'typebox', 'undici', 'viem']);
    const bundled = loadEach(true);
    const original = loadEach(false);
    for (const specifier of specifiers) {
      assert.equal(bundled[specifier]?.url, installed.get(specifier)?.url);
      assert.match(bundled[specifier]?.url ?? '', /\/node_modules\/\.cache\/platform-vendor\//);
      assert.match(original[specifier]?.url ?? '', new RegExp(`/node_modules/${packageOf(specifier)}/`), `${specifier} without the hook`);
      assert.deepEqual(bundled[specifier]?.exports, original[specifier]?.exports, `${specifier} exports what the package does`);
    }
  });

  describe('which imports are redirected', () => {
    const root = mkdtempSync(join(tmpdir(), 'vendor-bundles-'));
    after(() => rmSync(root, { recursive: true, force: true }));
    const rootUrl = pathToFileURL(`${root}/`);
    const write = (path: string, value: unknown) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), JSON.stringify(value));
    };
    const installed = (name: string, version: string) => write(`node_modules/${name}/package.json`, { name, version });
    write('node_modules/.cache/platform-vendor/manifest.json', {
      packages: {
        one: { version: '1.0.0', entries: { one: 'one/index.mjs', 'one/sub': 'one/sub.mjs' }, nestedCopiesUnder: ['node_modules/old-user/'] },
        two: { version: '2.0.0', entries: { two: 'two/index.cjs' }, nestedCopiesUnder: [] },
        gone: { version: '1.0.0', entries: { gone: 'gone/index.mjs' }, nestedCopiesUnder: [] },
      },
    });
    installed('one', '1.0.0');
    installed('two', '2.1.0');

    test('a package whose bundle was built from the installed version is redirected, every subpath of it', () => {
      const table = vendorRedirects(rootUrl);
      const fromApp = pathToFileURL(join(root, 'src', 'app.ts')).href;
      assert.deepEqual(vendorRedirect(table, 'one', fromApp), {
        url: new URL('node_modules/.cache/platform-vendor/one/index.mjs', rootUrl).href,
        format: 'module',
        keepOwnCopy: [new URL('node_modules/old-user/', rootUrl).href],
      });
      assert.equal(vendorRedirect(table, 'one/sub', fromApp)?.url, new URL('node_modules/.cache/platform-vendor/one/sub.mjs', rootUrl).href);
      assert.equal(vendorRedirect(table, 'one/other', fromApp), undefined, 'a subpath the bundle does not have');
    });

    test('an import from a package with its own nested copy keeps that copy', () => {
      const table = vendorRedirects(rootUrl);
      assert.equal(vendorRedirect(table, 'one', pathToFileURL(join(root, 'node_modules', 'old-user', 'index.js')).href), undefined);
      assert.notEqual(vendorRedirect(table, 'one', pathToFileURL(join(root, 'node_modules', 'other', 'index.js')).href), undefined);
    });

    test('a package updated since its bundle was built, or no longer installed, loads its own files', () => {
      const table = vendorRedirects(rootUrl);
      assert.equal(vendorRedirect(table, 'two', undefined), undefined, 'built from 2.0.0, 2.1.0 installed');
      assert.equal(vendorRedirect(table, 'gone', undefined), undefined);
    });

    test('without a manifest nothing is redirected', () => {
      assert.equal(vendorRedirects(pathToFileURL(`${join(root, 'node_modules')}/`)).size, 0);
    });
  });
});
