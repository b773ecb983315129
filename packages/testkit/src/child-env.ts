/**
 * What a service process started by a test inherits from the test: PATH and HOME, and the response-schema check that
 * `npm test` turns on (PLATFORM_CHECK_RESPONSES=1), so the answers those processes give each other and the test are
 * checked against their declared schemas as an in-process app's are. Nothing else of the test's environment leaks in.
 */
export function inheritedChildEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(process.env.PLATFORM_CHECK_RESPONSES === '1' ? { PLATFORM_CHECK_RESPONSES: '1' } : {}),
  };
}
