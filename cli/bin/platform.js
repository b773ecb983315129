#!/usr/bin/env node
// Runs under whatever `node` is on PATH, so it stays plain JS with no static imports and checks the version first.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`platform needs Node 24 (this is ${process.version}); from the repo, \`npm start\` or \`npx platform\` use the pinned one.`);
  process.exit(1);
}
// Node's compile cache, under the project's node_modules/.cache (NODE_COMPILE_CACHE wins when set): every `platform`
// command and `platform up` load the same few hundred modules, and compiled once they start in about a third of the
// CPU. Set in the environment too, so the daemons the router starts share it. A cache that cannot be written is skipped.
if (!process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = new URL('../../node_modules/.cache/node-compile-cache', import.meta.url).pathname;
process.getBuiltinModule('node:module').enableCompileCache?.(process.env.NODE_COMPILE_CACHE);
import('../src/platform.ts').then(({ main }) => main(process.argv.slice(2)));
