// Bundles the daemon into one ES module folder, dist/, for the processes the router starts one per user. Plain JS
// (not TypeScript) so the root postinstall can run it under whatever Node npm runs on.
//
// Why: measured on our 2-core machines, Node 24 running the daemon's .ts sources needs ~300 ms to be ready and
// ~100 MB resident (type stripping loads a WASM compiler; hundreds of modules are resolved one by one); the bundle
// is ready in ~120 ms at ~70 MB. The MCP SDK stays in a chunk of its own, loaded on the first tool call.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const daemonRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(daemonRoot, '..', '..');
export const bundleDir = join(daemonRoot, 'dist');
export const bundleEntry = join(bundleDir, 'main.js');

/**
 * How to launch the bundle for the smallest idle footprint (measured): a 1 MiB young generation keeps startup garbage
 * from piling up, and with gc exposed the daemon collects once after start. `node ${daemonNodeFlags} dist/main.js`.
 */
export const daemonNodeFlags = ['--max-semi-space-size=1', '--expose-gc'];
const sources = [join(daemonRoot, 'src'), join(repoRoot, 'packages', 'kit', 'src'), join(repoRoot, 'packages', 'client', 'src')];

function newest(folder) {
  let latest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** True when dist/ exists and is newer than every source file it was built from. */
export function bundleIsFresh() {
  try {
    return statSync(bundleEntry).mtimeMs >= Math.max(...sources.map(newest));
  } catch {
    return false;
  }
}

/** Builds dist/ (main.js plus chunks). */
export async function bundleDaemon() {
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(daemonRoot, 'src', 'main.ts')],
    outdir: bundleDir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minify: true,
    legalComments: 'none',
    // pino starts transports in worker threads by file path, which a bundle would break; it loads from node_modules.
    external: ['pino', 'pino-pretty'],
    // Bundled CommonJS dependencies call require(); ESM output gives them one.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return bundleEntry;
}

/** Builds dist/ unless it is already fresh; resolves with the entry file. */
export async function ensureBundle() {
  return bundleIsFresh() ? bundleEntry : bundleDaemon();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const entry = await bundleDaemon();
  console.log(`daemon bundle: ${entry}`);
}
