import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import type { RunResult } from './load-process.ts';
import type { SettlementProcess } from './settlement-process.ts';

/**
 * CPU in cores (CPU seconds per wall second): the service process (all its threads), its sequencer thread alone,
 * every postgres process, the load generator, the machine, and `other`: the machine minus the rest, jobs that are not ours.
 */
export interface Cores {
  service: number;
  sequencer: number;
  postgres: number;
  load: number;
  machine: number;
  other: number;
}

export const cpuHeader = 'CPU service | of which sequencer thread | CPU postgres | CPU client | CPU other | CPU machine';
export const cpuAlign = '---:|---:|---:|---:|---:|---:';

/** Runs `work` between two CPU readings: the service (its own cpuUsage and its main thread's), the load generator (its report), postgres and the machine. */
export async function measure(service: SettlementProcess, work: () => Promise<RunResult>): Promise<{ result: RunResult; cores: Cores }> {
  const serviceBefore = await service.ask('cpu');
  const before = cpuSnapshot();
  const result = await work();
  const after = cpuSnapshot();
  const serviceAfter = await service.ask('cpu');
  const wallMs = (after?.at ?? 0) - (before?.at ?? 0);
  const perWall = (micros: number) => (wallMs > 0 ? micros / 1000 / wallMs : Number.NaN);
  const serviceCores = perWall(serviceAfter.user + serviceAfter.system - serviceBefore.user - serviceBefore.system);
  const { machine, postgres } = cpuBetween(before, after);
  return {
    result,
    cores: {
      service: serviceCores,
      sequencer: perWall(serviceAfter.mainThread - serviceBefore.mainThread),
      postgres,
      load: result.loadCpuCores,
      machine,
      other: Math.max(0, machine - serviceCores - postgres - result.loadCpuCores),
    },
  };
}

export function cores(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(2);
}

export function cpuCells(c: Cores): string {
  return `${cores(c.service)} | ${cores(c.sequencer)} | ${cores(c.postgres)} | ${cores(c.load)} | ${cores(c.other)} | ${cores(c.machine)}`;
}

export function errorCount(result: RunResult): number {
  return Object.values(result.errors).reduce((sum, n) => sum + n, 0);
}

export function ms(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(1);
}
