import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { findArtifact } from '../evm/abi-source.ts';
import { ContractName, ProjectId } from './schemas.ts';
import { defineTool, readOnly } from './tool.ts';

export function artifactGetTool(engine: Engine) {
  return defineTool({
    operation: 'artifact_get',
    tool: 'tachyon_artifact_get',
    description: "Fetch a compiled contract's artifact (ABI, bytecode, deployed bytecode) by name from a project's latest successful compile.",
    input: Type.Object({ name: ContractName, project_id: ProjectId }, { additionalProperties: false }),
    annotations: { title: 'Get a build artifact', ...readOnly, openWorldHint: false },
    http: {
      method: 'GET',
      path: '/v1/artifacts/:name',
      params: Type.Object({ name: ContractName }),
      query: Type.Object({ project_id: ProjectId }, { additionalProperties: false }),
    },
    run: async (input) => {
      const row = await findArtifact(engine.artifacts, input.name, input.project_id);
      return {
        project_id: row.project_id,
        name: row.name,
        source: row.source,
        compiler: row.solc_version,
        abi: row.abi,
        bytecode: row.bytecode,
        deployed_bytecode: row.deployed_bytecode,
        compiled_at: row.created_at.toISOString(),
      };
    },
  });
}
