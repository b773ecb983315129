import { join } from 'node:path';
import { serviceContracts } from '@platform/testkit/contract-checks';

/** The marketplace's contracts: what `build-contracts.ts` compiles and `test/contracts.test.ts` checks (artifacts.json holds exactly the targets). */
export const contracts = serviceContracts('services/marketplace', join(import.meta.dirname, '..', 'contracts'), ['ServiceRegistry']);
