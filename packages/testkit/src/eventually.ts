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

/**
 * Polls another process's state (a service's HTTP answer, a process table) every `intervalMs` until `check` holds,
 * for at most `timeoutMs`. For state this process cannot be told about; within a process use `eventually`.
 *
 * @example await pollUntil(async () => (await fetch(url)).ok, 'the withdrawal is paid', { timeoutMs: 30_000 })
 */
export async function pollUntil(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting after ${options.timeoutMs ?? 60_000} ms: ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
