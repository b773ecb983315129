import { ServiceError } from '@platform/kit/errors';
import { byValue, type ServiceMetrics } from '@platform/kit/observability/metrics';

/**
 * How a compile ended: `compiled`, or `cached` (answered from the compile cache); `compile_error` (solc reported an
 * error: a normal answer, success=false); `timeout` (over CONTRACTS_COMPILE_TIMEOUT_MS); `refused` (a request the
 * engine refused: bad sources, unknown target); `error` (a 5xx).
 */
export const compileOutcomes = ['compiled', 'cached', 'compile_error', 'timeout', 'refused', 'error'] as const;
/** How a test run ended: `passed` (every selected test), `failed` (one or more), or as a compile can. */
export const testOutcomes = ['passed', 'failed', 'compile_error', 'timeout', 'refused', 'error'] as const;
/**
 * How a deploy ended: mined `confirmed` or `reverted`; `submitted` (no receipt within the wait); `replayed` (the
 * idempotency key's recorded deployment answered again, nothing sent); `refused` before signing (policy, caps, a
 * revert in the estimate, a key reused) or by the node; `error`.
 */
export const deployOutcomes = ['confirmed', 'reverted', 'submitted', 'replayed', 'refused', 'error'] as const;
export type CompileOutcome = (typeof compileOutcomes)[number];
export type TestOutcome = (typeof testOutcomes)[number];
export type DeployOutcome = (typeof deployOutcomes)[number];

export interface ContractsMetrics {
  compiled(outcome: CompileOutcome): void;
  tested(outcome: TestOutcome): void;
  deployed(outcome: DeployOutcome): void;
  /** A deployment mined within its request: the gas it used and what it cost the wallet (value plus fee), in wei. */
  deployMined(gasUsed: bigint, spendWei: bigint): void;
}

const gasBuckets = [21_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000];
/** In the chain's native unit (ether on Ethereum): a local chain's deploy at 1 gwei is about 0.001. */
const spendBuckets = [0.000001, 0.00001, 0.0001, 0.001, 0.01, 0.1, 1, 10];
const weiPerNative = 10n ** 18n;

/** The contract engine's metrics, every series made up front at zero. No label names a project, contract, wallet or chain. */
export function contractsMetrics(metrics: ServiceMetrics): ContractsMetrics {
  const byOutcome = <O extends string>(name: string, help: string, outcomes: readonly O[]) => {
    const counter = metrics.counter<'outcome'>({ name, help, labelNames: ['outcome'] });
    const children = byValue(outcomes, (outcome) => counter.labels(outcome));
    return (outcome: O) => children[outcome].inc();
  };
  const gas = metrics.histogram({ name: 'contracts_deploy_gas_used', help: 'Gas used by each deployment mined within its request', buckets: gasBuckets });
  const spend = metrics.histogram({
    name: 'contracts_deploy_spend',
    help: "What each deployment mined within its request cost the wallet (value plus gas used times the effective gas price), in the chain's native unit",
    buckets: spendBuckets,
  });
  return {
    compiled: byOutcome('contracts_compiles_total', 'Compiles (the compile tool and route), by outcome', compileOutcomes),
    tested: byOutcome('contracts_tests_total', 'Solidity test runs (one per test request), by outcome', testOutcomes),
    deployed: byOutcome('contracts_deploys_total', 'Deploy requests, by outcome', deployOutcomes),
    deployMined(gasUsed, spendWei) {
      gas.observe(Number(gasUsed));
      // Whole units and the remainder apart, so a large spend keeps its precision as a number.
      spend.observe(Number(spendWei / weiPerNative) + Number(spendWei % weiPerNative) / 1e18);
    },
  };
}

/** A failure's outcome: the caller's (a 4xx) is `refused`, anything else `error`. */
export function failureOutcome(error: unknown): 'refused' | 'error' {
  return error instanceof ServiceError && error.status < 500 ? 'refused' : 'error';
}

/** `failureOutcome`, and `timeout` for a failure whose reason is one of `reasons` (a compile or a test run over its limit). */
export function timedFailureOutcome(reasons: readonly string[]): (error: unknown) => 'timeout' | 'refused' | 'error' {
  return (error) => (error instanceof ServiceError && reasons.includes(String(error.details?.reason)) ? 'timeout' : failureOutcome(error));
}

/** Runs a tool's work and counts how it ended: `outcomeOf` names a result, `failureOf` a failure (which is thrown on). */
export async function countOutcome<T, O extends string>(
  count: (outcome: O) => void,
  run: () => Promise<T>,
  outcomeOf: (result: T) => O,
  failureOf: (error: unknown) => O,
): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    count(failureOf(error));
    throw error;
  }
  count(outcomeOf(result));
  return result;
}
