// Points imports of the vendored packages at their bundles (scripts/vendor-bundles.mjs builds them at install): a
// package of hundreds of files loads as a few modules. Importing this file registers the hook, once per process; the
// `platform` command imports it before anything else, and `npm test` hands it to every test file (`--import`).
// Plain JS with node: imports only.
//
// Safe by construction: a package is redirected only when its bundle was built from the version installed now (a
// package updated since falls back to its own files until the next install), an import from a folder with its own
// nested copy of the package keeps that copy, and every subpath the package exports is in its bundle, so no process
// ever holds two copies of one package's internals. Without the bundles (an install that skipped scripts), nothing
// changes.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const projectRoot = new URL('../../', import.meta.url);

/**
 * What the bundles under `root` (a folder URL ending in `/`) redirect: specifier → the bundle's URL, its format, and
 * the folders (URL prefixes) whose imports keep their own copy. Empty without a manifest.
 */
export function vendorRedirects(root = projectRoot) {
  const folder = new URL('node_modules/.cache/platform-vendor/', root);
  const table = new Map();
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(new URL('manifest.json', folder), 'utf8'));
  } catch {
    return table;
  }
  for (const [name, bundle] of Object.entries(manifest.packages)) {
    let installed;
    try {
      installed = JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), 'utf8')).version;
    } catch {
      continue;
    }
    if (installed !== bundle.version) continue;
    const keepOwnCopy = bundle.nestedCopiesUnder.map((nested) => new URL(nested, root).href);
    for (const [specifier, file] of Object.entries(bundle.entries))
      table.set(specifier, { url: new URL(file, folder).href, format: file.endsWith('.cjs') ? 'commonjs' : 'module', keepOwnCopy });
  }
  return table;
}

/** The bundle an import of `specifier` from `parentURL` loads, or undefined for Node's own resolution. */
export function vendorRedirect(table, specifier, parentURL) {
  const bundle = table.get(specifier);
  if (bundle === undefined) return undefined;
  if (parentURL !== undefined && bundle.keepOwnCopy.some((prefix) => parentURL.startsWith(prefix))) return undefined;
  return bundle;
}

// Once per process, however many times it is imported (the test runner's --import, then `platform`'s own).
const registered = Symbol.for('platform.vendorBundles');
if (!globalThis[registered]) {
  globalThis[registered] = true;
  const table = vendorRedirects();
  if (table.size > 0)
    registerHooks({
      resolve(specifier, context, nextResolve) {
        const bundle = vendorRedirect(table, specifier, context.parentURL);
        return bundle === undefined ? nextResolve(specifier, context) : { url: bundle.url, format: bundle.format, shortCircuit: true };
      },
    });
}
