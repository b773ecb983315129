import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings every platform process runs with, applied before a service starts: by `platform` (every command,
 * `platform up` and `serve`, before any service's module loads: cli/bin/platform.js), by `runAsMain` (`node
 * src/main.ts`), and in the benches' child processes (testkit `serveChild`), so a bench measures what production runs.
 *
 * `--no-allocation-site-pretenuring`: V8 allocates straight into the old generation the objects of an allocation
 * site whose objects it saw survive young-generation collections. A service's per-request objects live a few ms, but
 * those in flight at a collection survive it, and the sites that made them (the gateway's upstream exchange,
 * Fastify's handler, a booking's submit) were pretenured: every later request's objects then went to the old
 * generation, which filled with garbage only a mark-compact frees. The gateway at 3,000 calls/s (Intel Xeon class,
 * eight windows of 5 s each way): 9 mark-compacts of 5–16 ms with the default, p99 5.9–12.1 ms; 2 (both at start)
 * without pretenuring, p99 4.0–6.5 ms (README, gateway). Node's documentation warns that a flag changed once the
 * process runs may misbehave or do nothing; this one is a heap setting read as collections decide, and set this way
 * (before a service starts) it measured the same as on the command line: 2 and 3 mark-compacts in the same probe.
 */
export function applyServiceV8Flags(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
