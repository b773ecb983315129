import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { limits } from '../limits.ts';
import { countOutcome, timedFailureOutcome } from '../metrics.ts';
import { runTests } from '../testing/run-tests.ts';
import { Optimize, ProjectId, Sources, ViaIr } from './schemas.ts';
import { defineTool, readOnly } from './tool.ts';

const Pattern = (description: string) => Type.String({ minLength: 1, maxLength: limits.patternChars, description });

const TestInput = Type.Object(
  {
    sources: Sources,
    match_path: Type.Optional(Pattern('Glob over test file paths, e.g. test/**/Token*.t.sol')),
    match_contract: Type.Optional(Pattern('Regex over test contract names')),
    filter: Type.Optional(Pattern('Regex over test function names')),
    project_id: Type.Optional(ProjectId),
    optimize: Type.Optional(Optimize),
    via_ir: Type.Optional(ViaIr),
  },
  { additionalProperties: false },
);

export function testTool(engine: Engine) {
  return defineTool({
    operation: 'test',
    tool: 'tachyon_test',
    description:
      'Run Foundry-style Solidity tests (forge-std Test, setUp, test* and fuzz tests, cheatcodes) on an in-memory EVM. Returns per test: status, revert reason or failed assertion, gas (fuzz: runs, mean and median), console logs, and for failures a call trace and the failing line.',
    input: TestInput,
    annotations: { title: 'Run Solidity tests', ...readOnly, openWorldHint: false },
    http: { method: 'POST', path: '/v1/test' },
    run: (input) =>
      countOutcome(
        engine.metrics.tested,
        () => runTests({ compiler: engine.toolchain.compiler, tests: engine.toolchain.tests, fuzzRuns: engine.toolchain.fuzzRuns }, input),
        (result) => (!result.compiled ? 'compile_error' : result.success ? 'passed' : 'failed'),
        timedFailureOutcome(['compile_timeout', 'test_timeout']),
      ),
  });
}
