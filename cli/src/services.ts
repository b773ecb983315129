import type { Env } from '@platform/kit/config';
import type { StartService } from '@platform/kit/lifecycle';
import { identityRunsUnder } from './dev-identity/up-identity.ts';

/** What an agent calls: the daemon started here and the daemons the router starts get their addresses. */
const agentServices = ['scheduler', 'contracts', 'settlement', 'gateway', 'memory', 'connector'];

export interface ServiceEntry {
  name: string;
  /** Services that must be listening first (their addresses are handed to this one); the rest start in parallel. */
  after: readonly string[];
  /** Whether `platform up` runs it under these settings (always, unless said). */
  runsUnder?: (env: Env) => boolean;
  /** Loaded on demand, so `platform serve x` only imports x. */
  load(): Promise<{ start: StartService }>;
}

/**
 * Every service the platform runs, in table order, with what each waits for (`platform up` starts the others at the
 * same time and stops them in reverse). The one place that knows them all.
 */
export const services: readonly ServiceEntry[] = [
  { name: 'scheduler', after: [], load: () => import('../../services/scheduler/src/main.ts') },
  // Brings up the local chain settlement's vault and the marketplace's registry live on.
  { name: 'contracts', after: [], load: () => import('../../services/contracts/src/main.ts') },
  { name: 'settlement', after: ['contracts'], load: () => import('../../services/settlement/src/main.ts') },
  // After settlement (every paid call holds and captures there) and the local chain (its service registry).
  { name: 'marketplace', after: ['contracts', 'settlement'], load: () => import('../../services/marketplace/src/main.ts') },
  { name: 'gateway', after: [], load: () => import('../../services/gateway/src/main.ts') },
  { name: 'memory', after: [], load: () => import('../../services/memory/src/main.ts') },
  // The vault of the user's OAuth credentials and the tools that use them.
  { name: 'connector', after: [], load: () => import('../../services/connector/src/main.ts') },
  // After the services it calls: `up` hands it their addresses.
  { name: 'daemon', after: agentServices, load: () => import('../../services/daemon/src/main.ts') },
  // The front door: it starts one daemon per user (the daemon's bundle) as requests arrive, wired like the daemon,
  // trusts the development identity provider when `up` runs one, and serves the console (settlement's and the
  // marketplace's public reads pass through it).
  { name: 'router', after: [...agentServices, 'identity'], load: () => import('../../services/router/src/main.ts') },
  // In development only: a real OpenID provider with one development user, whose tokens the router checks.
  { name: 'identity', after: [], runsUnder: identityRunsUnder, load: () => import('./dev-identity/up-identity.ts') },
];

export function findService(name: string): ServiceEntry | undefined {
  return services.find((service) => service.name === name);
}

export const serviceNames = (): string => services.map((service) => service.name).join(', ');
