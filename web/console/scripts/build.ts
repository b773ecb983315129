import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds the console (src/) into dist/ with Vite: what the router serves at /console/. Run by the root postinstall
// (so `npm install` leaves a built console), by `platform up` when a source is newer than the build, and by
// `npm run build -w web/console`. Nothing is fetched at run time: the page is these files.

const consoleRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(consoleRoot, '..', '..');
export const consoleDist = join(consoleRoot, 'dist');
const consoleIndex = join(consoleDist, 'index.html');
// The kit's and the client's code the page imports (verifiers, the SSE reader) count as its sources too.
const sources = [
  join(consoleRoot, 'src'),
  join(consoleRoot, 'index.html'),
  join(repoRoot, 'packages', 'kit', 'src'),
  join(repoRoot, 'packages', 'client', 'src'),
];

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** True when dist/ exists and is newer than every source it was built from. */
export function consoleBuildIsFresh(): boolean {
  try {
    return statSync(consoleIndex).mtimeMs >= Math.max(...sources.map(newest));
  } catch {
    return false;
  }
}

/** Builds dist/: index.html and content-hashed assets under assets/. */
export async function buildConsole(): Promise<string> {
  const { build } = await import('vite');
  await build({
    root: consoleRoot,
    base: '/console/',
    configFile: false,
    logLevel: 'warn',
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    build: {
      outDir: consoleDist,
      emptyOutDir: true,
      target: 'es2023',
      // Every browser that runs the page supports modulepreload; the polyfill would only add bytes.
      modulePreload: { polyfill: false },
      // No inline assets: the CSP allows the page's own files only, and data: only for images.
      assetsInlineLimit: 0,
      sourcemap: false,
      reportCompressedSize: false,
    },
  });
  return consoleIndex;
}

/**
 * Rebuilds when a source changed since the last build (`platform up` calls it before the router starts), in a child
 * process: Vite sets NODE_ENV=production in the process that builds, which would turn every service `up` starts
 * after it into production, and its bundler need not stay loaded in `up`.
 */
export async function ensureConsoleBuild(): Promise<void> {
  if (consoleBuildIsFresh()) return;
  const { spawnSync } = await import('node:child_process');
  const built = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`the console's build failed (exit ${built.status}): run npm run build -w web/console`);
}

if (import.meta.main) await buildConsole();
