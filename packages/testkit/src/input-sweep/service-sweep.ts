import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processEngines } from '../databases.ts';
import { type ServiceProcess, startServiceProcess } from '../service-process.ts';
import { formatFindings, type SweepOptions, sweepService } from './sweep.ts';

export interface ServiceSweep extends Omit<SweepOptions, 'url' | 'credentials' | 'samples' | 'alive'> {
  /** The service's settings (its tokens set, so every protected route is protected). */
  env: Record<string, string>;
  /** The headers of each security scheme, got from the running service (a handshake, say). */
  credentials(service: ServiceProcess): Promise<SweepOptions['credentials']>;
  /** Valid values by name, made on the running service (an alarm that exists, a DID it knows). */
  samples?(service: ServiceProcess, credentials: SweepOptions['credentials']): Promise<SweepOptions['samples']>;
  /** The listeners to sweep when the service has more than one (the router's public and internal ones); its first by default. */
  listeners?(service: ServiceProcess): string[];
  startOptions?: Parameters<typeof startServiceProcess>[2];
}

/**
 * Registers the malformed-input sweep of one service as `node:test` tests, one per database engine: the service runs as
 * `platform serve <name>` does, the sweep drives its own `/openapi.json`, and the test fails naming every finding.
 *
 * @example sweepServiceTests('scheduler', { env: { SCHEDULER_TOKEN: token }, credentials: async (service) => ({ ... }) })
 */
export function sweepServiceTests(name: string, sweep: ServiceSweep): void {
  for (const engine of processEngines())
    test(`${name}: every operation of /openapi.json refuses malformed input in its envelope (${engine.name})`, async (context) => {
      const database = await engine.database();
      const service = await startServiceProcess(name, { ...sweep.env, ...database.env }, sweep.startOptions);
      try {
        const credentials = await sweep.credentials(service);
        const samples = (await sweep.samples?.(service, credentials)) ?? {};
        for (const url of sweep.listeners?.(service) ?? [service.url]) {
          const report = await sweepService({
            ...sweep,
            url,
            credentials,
            samples,
            alive: () => service.process.exitCode === null && service.process.signalCode === null,
          });
          context.diagnostic(`${url}: ${report.requests} requests to ${report.operations} operations`);
          assert.ok(report.requests > report.operations, `the sweep sent ${report.requests} requests to ${report.operations} operations`);
          assert.deepEqual(formatFindings(report), []);
        }
        assert.deepEqual(service.logs.filter((line) => /"level":(50|60)/.test(line)).slice(0, 5), [], 'the service logged errors during the sweep');
      } finally {
        await service.stop();
        await database.drop();
      }
    });
}
