import { join } from 'node:path';
import { serviceContracts } from '../src/contract-checks.ts';

/** The testkit's bench contracts: what `build-contracts.ts` compiles and `src/bench-contracts.test.ts` checks. */
export const benchContracts = serviceContracts('packages/testkit', join(import.meta.dirname, '..', 'contracts'), ['BenchAuthorizationToken']);
