// Builds one bundle per dependency that ships as hundreds of small files, so a process loads a few modules instead of
// ~1,000 (cli/bin/vendor-bundles.js points imports at them). Plain JS, run by the root postinstall (and by the image's
// build-tree.sh for the image's own node_modules): `node scripts/vendor-bundles.mjs [<root with node_modules>]`.
//
// Why: a service's app imports typebox (373 files), kysely (255), viem with ox and abitype (417) and undici (110);
// Node resolves, reads and links each file one by one, and that was half the CPU of loading a service (gateway's app:
// 0.72 s of CPU on the AMD EPYC class, 0.34 s with these bundles), paid by every process the platform starts, every
// `platform` command and every test file.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What is bundled: packages of many files, each bundled whole (every subpath it exports) so it stays one copy. Not
 * @opentelemetry/api (44 files): Node loads its CommonJS build, which has two entries.
 */
const vendoredPackages = ['typebox', 'kysely', 'viem', 'undici'];
const vendorFolder = (root) => join(root, 'node_modules', '.cache', 'platform-vendor');

/** The subpaths a package exports that a program can import (no patterns, no package.json, no build folders). */
function exportedSubpaths(manifest) {
  const exports = manifest.exports;
  if (exports === undefined || typeof exports === 'string' || Object.keys(exports).every((key) => !key.startsWith('.'))) return ['.'];
  return Object.keys(exports).filter((key) => !key.includes('*') && key !== './package.json' && !key.startsWith('./_'));
}

/** Node's conditions for an `import` (Node 24), in the order it tries a package's `exports` keys against them. */
const nodeConditions = new Set(['node', 'import', 'module-sync', 'default']);

function exportTarget(target) {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) return exportTarget(target[0]);
  if (target === null || typeof target !== 'object') return undefined;
  for (const [condition, value] of Object.entries(target)) if (nodeConditions.has(condition)) return exportTarget(value);
  return undefined;
}

/**
 * Whether Node, importing the package, loads an ES module: its main export's file as Node picks it (a package may
 * point `import` at ES modules, or, as @opentelemetry/api does, keep ES modules under `module`, which Node ignores,
 * and load CommonJS), then that file's extension or its folder's nearest `type`. The bundle is the format Node
 * would load, so a module sees the same exports through it.
 */
function loadsAsModule(folder, manifest) {
  const main = exportTarget(typeof manifest.exports === 'object' && '.' in manifest.exports ? manifest.exports['.'] : manifest.exports) ?? manifest.main ?? 'index.js';
  const file = join(folder, main);
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  for (let dir = dirname(file); dir.startsWith(folder); dir = dirname(dir)) {
    const nearest = join(dir, 'package.json');
    if (existsSync(nearest)) return JSON.parse(readFileSync(nearest, 'utf8')).type === 'module';
  }
  return false;
}

/**
 * For each name, the folders (relative to the root) whose code resolves it to a nested copy of another version
 * (`@kubernetes/client-node` has its own undici): an import from inside them keeps going to that copy. One walk of
 * the tree for every name.
 */
function nestedCopies(root, names) {
  const found = Object.fromEntries(names.map((name) => [name, []]));
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === '.cache' || entry.name === '.bin') continue;
      const path = join(folder, entry.name);
      if (entry.name.startsWith('@')) {
        walk(path);
        continue;
      }
      const nested = join(path, 'node_modules');
      if (!existsSync(nested)) continue;
      for (const name of names) if (existsSync(join(nested, name, 'package.json'))) found[name].push(`${relative(root, path)}/`);
      walk(nested);
    }
  };
  walk(join(root, 'node_modules'));
  return found;
}

/** Bundles every vendored package under `root` and writes the manifest the loader reads. Returns the manifest. */
export async function buildVendorBundles(root = fileURLToPath(new URL('..', import.meta.url))) {
  const { build } = await import('esbuild');
  // Built beside the folder and moved into place at the end: a process starting meanwhile finds the old bundles or
  // the new ones, never a folder half written.
  const out = `${vendorFolder(root)}.building-${process.pid}`;
  rmSync(out, { recursive: true, force: true });
  try {
    const packages = {};
    const installed = vendoredPackages.filter((name) => existsSync(join(root, 'node_modules', name, 'package.json')));
    const nested = nestedCopies(root, installed);
    for (const name of installed) packages[name] = await bundlePackage(build, root, out, name, nested[name]);
    const written = { packages };
    writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(written, null, 2)}\n`);
    rmSync(vendorFolder(root), { recursive: true, force: true });
    renameSync(out, vendorFolder(root));
    return written;
  } finally {
    // A failed build leaves the bundles that were there, and no half-built folder beside them.
    rmSync(out, { recursive: true, force: true });
  }
}

/** One package's bundle under `out`: its manifest entry. */
async function bundlePackage(build, root, out, name, nestedCopiesUnder) {
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  const esm = loadsAsModule(join(root, 'node_modules', name), manifest);
  const subpaths = exportedSubpaths(manifest);
  // CommonJS cannot share chunks between bundles: a second entry would be a second copy of the package's internals.
  if (!esm && subpaths.length > 1) throw new Error(`vendor bundles: ${name} is CommonJS with ${subpaths.length} entries; vendor only ES module packages or single-entry ones`);
  const specifier = (subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`);
  const outName = (subpath) => (subpath === '.' ? 'index' : subpath.slice(2));
  await build({
    entryPoints: Object.fromEntries(subpaths.map((subpath) => [outName(subpath), specifier(subpath)])),
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node24',
    // One ES module per subpath with shared chunks, so the package's internals exist once whichever subpath loads
    // them; a CommonJS package stays CommonJS (one file: named imports of it work as they did).
    format: esm ? 'esm' : 'cjs',
    // Resolved as Node resolves them: its conditions (esbuild adds node, and import or require), `main` only.
    conditions: ['module-sync'],
    mainFields: ['main'],
    splitting: esm && subpaths.length > 1,
    outdir: join(out, name),
    outExtension: { '.js': esm ? '.mjs' : '.cjs' },
    // Another vendored package stays an import, resolved to its own bundle.
    external: vendoredPackages.filter((other) => other !== name).flatMap((other) => [other, `${other}/*`]),
    legalComments: 'eof',
    logLevel: 'error',
  });
  return {
    version: manifest.version,
    entries: Object.fromEntries(subpaths.map((subpath) => [specifier(subpath), `${name}/${outName(subpath)}.${esm ? 'mjs' : 'cjs'}`])),
    nestedCopiesUnder,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const manifest = await buildVendorBundles(process.argv[2]);
  console.log(`vendor bundles: ${Object.keys(manifest.packages).join(', ')}`);
}
