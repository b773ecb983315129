import { Type } from 'typebox';
import { compileProject } from '../compile/compile-project.ts';
import type { Engine } from '../engine.ts';
import { limits } from '../limits.ts';
import { countOutcome, timedFailureOutcome } from '../metrics.ts';
import { Optimize, ProjectId, Sources, ViaIr } from './schemas.ts';
import { defineTool, readOnly } from './tool.ts';

const CompileInput = Type.Object(
  {
    sources: Sources,
    targets: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: limits.contractNameChars }), {
        maxItems: limits.targets,
        description: 'Contracts to return; empty returns every contract of the sources',
      }),
    ),
    project_id: Type.Optional(ProjectId),
    optimize: Type.Optional(Optimize),
    via_ir: Type.Optional(ViaIr),
  },
  { additionalProperties: false },
);

export function compileTool(engine: Engine) {
  return defineTool({
    operation: 'compile',
    tool: 'tachyon_compile',
    description:
      'Compile Solidity sources with solc 0.8.37. Returns per-contract ABI and bytecode, a stable project_id, and compiler diagnostics with file, line and column; compile errors are a normal answer (success=false). Unchanged projects answer from cache.',
    input: CompileInput,
    annotations: { title: 'Compile Solidity', ...readOnly, openWorldHint: false },
    http: { method: 'POST', path: '/v1/compile' },
    run: (input) =>
      countOutcome(
        engine.metrics.compiled,
        () => compileProject({ compiler: engine.toolchain.compiler, artifacts: engine.artifacts }, input),
        (result) => (!result.success ? 'compile_error' : result.cached ? 'cached' : 'compiled'),
        timedFailureOutcome(['compile_timeout']),
      ),
  });
}
