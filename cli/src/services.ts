import type { StartService } from '@platform/kit/lifecycle';

export interface ServiceEntry {
  name: string;
  /** Loaded on demand, so `platform serve x` only imports x. */
  load(): Promise<{ start: StartService }>;
}

/** Every service the platform runs, in start order (`platform up` stops them in reverse). The one place that knows them all. */
export const services: readonly ServiceEntry[] = [
  { name: 'scheduler', load: () => import('../../services/scheduler/src/main.ts') },
  // Before settlement: it brings up the local chain settlement's vault lives on.
  { name: 'contracts', load: () => import('../../services/contracts/src/main.ts') },
  { name: 'settlement', load: () => import('../../services/settlement/src/main.ts') },
  // After settlement (every paid call holds and captures there) and the local chain (its service registry).
  { name: 'marketplace', load: () => import('../../services/marketplace/src/main.ts') },
  { name: 'gateway', load: () => import('../../services/gateway/src/main.ts') },
  { name: 'memory', load: () => import('../../services/memory/src/main.ts') },
  // The vault of the user's OAuth credentials (connect flow and tools are still to come: issue 15).
  { name: 'connector', load: () => import('../../services/connector/src/main.ts') },
  // After the services it calls: `up` hands it their addresses.
  { name: 'daemon', load: () => import('../../services/daemon/src/main.ts') },
  // The front door: it starts one daemon per user (the daemon's bundle) as requests arrive.
  { name: 'router', load: () => import('../../services/router/src/main.ts') },
];

export function findService(name: string): ServiceEntry | undefined {
  return services.find((service) => service.name === name);
}

export const serviceNames = (): string => services.map((service) => service.name).join(', ');
