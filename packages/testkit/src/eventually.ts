/**
 * Waits until `condition` holds, checking once per turn of the event loop: never a timed sleep, and never
 * forever (a spinning wait would outlive the test runner's timeout, which cannot interrupt it).
 *
 * @example await eventually(async () => (await pendingRows()) === 0, 'all outcomes written')
 */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string | (() => string), maxTurns = 200_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting: ${typeof what === 'string' ? what : what()}`);
}
