// Root postinstall. On a fresh machine npm runs under whatever Node the machine has (often older than the
// Node 24 this project pins through the `node` package). npm then skips optional packages whose `engines`
// that older Node does not meet, such as EDR's native binding (node >= 22), and the contract engine cannot
// run tests. Once the pinned Node is in node_modules/.bin (npm puts it first on PATH for scripts, so it runs
// this file), install once more under it: that pass only adds what was skipped and leaves the lockfile alone.
import { spawnSync } from 'node:child_process';

const outerNode = process.env.npm_node_execpath;
const npmCli = process.env.npm_execpath;
const alreadyPinned = !outerNode || outerNode === process.execPath;
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1' && !alreadyPinned && npmCli) {
  const result = spawnSync(process.execPath, [npmCli, 'install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts'], {
    stdio: 'inherit',
    env: { ...process.env, PLATFORM_PINNED_NODE_PASS: '1' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// What runs from built files: the daemon's bundle, which the router starts once per user (services/daemon/scripts).
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1') {
  const { bundleDaemon } = await import('../services/daemon/scripts/bundle.mjs');
  await bundleDaemon();
}

// The console the router serves at /console/ (web/console), built by Vite: the page is these files, nothing is fetched
// at run time.
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1') {
  const { buildConsole } = await import('../web/console/scripts/build.ts');
  await buildConsole();
}

// One bundle per dependency of hundreds of files (scripts/vendor-bundles.mjs), which cli/bin/vendor-bundles.js points
// imports at: before the compile cache below, so the bundles are what it compiles.
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1') {
  const { buildVendorBundles } = await import('./vendor-bundles.mjs');
  await buildVendorBundles();
}

// Every service's first start on embedded PGlite copies one initialised database instead of running initdb
// (packages/kit/src/db/pglite-boot.ts): build that template now, once, rather than on the first `npm start`.
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1') {
  const { preparePGliteTemplate } = await import('../packages/kit/src/db/pglite-boot.ts');
  if (!(await preparePGliteTemplate())) console.warn('PGlite template not prepared: services will initialise their databases on first start');
}

// Node's compile cache, where the `platform` command keeps it (cli/bin/compile-cache.js): the modules of the command and
// of every service, compiled now, so the first `npm start` does not pay for it (a first start took 12 s with the cache
// still empty, 6 s once filled). Loading a module runs no service: each starts only as its process's main module.
if (process.env.PLATFORM_PINNED_NODE_PASS !== '1') {
  const warm = `const { useProjectCompileCache } = await import('./cli/bin/compile-cache.js'); useProjectCompileCache(); await import('./cli/bin/vendor-bundles.js');
    const { services } = await import('./cli/src/services.ts'); await import('./cli/src/platform.ts');
    for (const service of services) await service.load();`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', warm], { cwd: new URL('..', import.meta.url).pathname, stdio: 'inherit' });
  if (result.status !== 0) console.warn('compile cache not prepared: the first start compiles the modules itself');
}
