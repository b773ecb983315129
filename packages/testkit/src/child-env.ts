/**
 * Settings of the test run that the processes a test starts must share: the response-schema check `npm test` turns on
 * (PLATFORM_CHECK_RESPONSES=1), so their answers are checked against their declared schemas as an in-process app's
 * are; and Node's compile cache (NODE_COMPILE_CACHE, set by `npm test`), so the hundreds of CLI and service processes
 * the suite starts do not each compile the same modules again (a CLI command's CPU went from 0.6 s to 0.2 s); and
 * PGlite's settings for short-lived processes (PLATFORM_PGLITE_SHORT_LIVED=1, kit `db/pglite-boot.ts`: baseline-only
 * WebAssembly, a small page cache), which halve the CPU of a process with a database.
 */
const handedOn = ['PLATFORM_CHECK_RESPONSES', 'NODE_COMPILE_CACHE', 'PLATFORM_PGLITE_SHORT_LIVED'] as const;

export function testRunSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of handedOn) {
    const value = process.env[name];
    if (value) settings[name] = value;
  }
  return settings;
}

/**
 * What a service process started by a test inherits from the test: PATH and HOME and the test run's settings
 * (`testRunSettings`). Nothing else of the test's environment leaks in.
 */
export function inheritedChildEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunSettings() };
}
