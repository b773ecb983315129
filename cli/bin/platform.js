#!/usr/bin/env node
// Runs under whatever `node` is on PATH, so it stays plain JS with no static imports and checks the version first.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`platform needs Node 24 (this is ${process.version}); from the repo, \`npm start\` or \`npx platform\` use the pinned one.`);
  process.exit(1);
}
// Every `platform` command and `platform up` load the same few hundred modules: compiled once, they start in about a
// third of the CPU.
const { useProjectCompileCache } = await import('./compile-cache.js');
useProjectCompileCache();
// Before any service's module loads: V8 settings every platform process runs with (kit v8-flags.ts).
const { applyServiceV8Flags } = await import('@platform/kit/v8-flags');
applyServiceV8Flags();
// The dependencies of hundreds of files each (typebox, kysely, viem, undici) load from one bundle each: half the CPU
// of starting a service (vendor-bundles.js).
await import('./vendor-bundles.js');
import('../src/platform.ts').then(({ main }) => main(process.argv.slice(2)));
