// Node's compile cache for the platform's own processes, in one place: the `platform` command enables it before it
// loads anything, and the root postinstall fills it. Plain JS with no imports, loaded after platform.js checks the Node version.

/**
 * Turns on Node's compile cache for the modules this process loads from now on: under the project's
 * node_modules/.cache (NODE_COMPILE_CACHE wins when set), and set in the environment too, so the processes this one
 * starts (the daemons the router starts) share it. A cache that cannot be written is skipped by Node.
 */
export function useProjectCompileCache() {
  process.env.NODE_COMPILE_CACHE ||= new URL('../../node_modules/.cache/node-compile-cache', import.meta.url).pathname;
  process.getBuiltinModule('node:module').enableCompileCache?.(process.env.NODE_COMPILE_CACHE);
}
