import { invalidRequest } from '@platform/kit/errors';
import type { CompiledContract } from '../compile/compile-product.ts';
import type { Build } from '../compile/compiler.ts';
import { limits } from '../limits.ts';
import type { SuiteId } from './test-report.ts';

export interface TestFilters {
  /** Glob over the file path: `*` within a folder, `**` across folders (Foundry's --match-path). */
  match_path?: string | undefined;
  /** Regex over the test contract's name (--match-contract). */
  match_contract?: string | undefined;
  /** Regex over the test function's name (--match-test). */
  filter?: string | undefined;
}

/** Glob to an anchored regex; every other character is literal. */
export function globToRegExp(glob: string): RegExp {
  let pattern = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string;
    if (char === '*' && glob[index + 1] === '*') {
      // `**/` also matches no folder at all, so test/**/X.t.sol finds test/X.t.sol.
      const slash = glob[index + 2] === '/';
      pattern += slash ? '(?:.*/)?' : '.*';
      index += slash ? 2 : 1;
    } else if (char === '*') pattern += '[^/]*';
    else if (char === '?') pattern += '[^/]';
    else pattern += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${pattern}$`);
}

/** A caller's regex, checked here so a typo is a 400 naming the field rather than a runner failure. */
export function checkedRegExp(field: string, pattern: string): RegExp {
  if (pattern.length > limits.patternChars) throw invalidRequest(`${field} is longer than ${limits.patternChars} characters`, { field });
  try {
    return new RegExp(pattern);
  } catch {
    throw invalidRequest(`${field} is not a valid regular expression`, { field });
  }
}

function isTestContract(contract: CompiledContract): boolean {
  if (contract.bytecode === '0x') return false;
  return contract.abi.some((entry) => {
    const { type, name } = entry as { type?: string; name?: string };
    return type === 'function' && typeof name === 'string' && (name.startsWith('test') || name.startsWith('invariant'));
  });
}

/** The project's test contracts that pass the filters: contracts in the caller's files with test* or invariant* functions. */
export function selectSuites(build: Build, filters: TestFilters): SuiteId[] {
  const path = filters.match_path ? globToRegExp(filters.match_path) : undefined;
  const contract = filters.match_contract ? checkedRegExp('match_contract', filters.match_contract) : undefined;
  return build.product.contracts
    .filter((candidate) => build.sources[candidate.source] !== undefined && isTestContract(candidate))
    .filter((candidate) => (path ? path.test(candidate.source) : true) && (contract ? contract.test(candidate.name) : true))
    .map((candidate) => ({ source: candidate.source, name: candidate.name }));
}
