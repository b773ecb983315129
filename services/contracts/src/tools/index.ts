import type { Engine } from '../engine.ts';
import { artifactGetTool } from './artifact-get.tool.ts';
import { callTool } from './call.tool.ts';
import { chainListTool, chainRegisterTool, chainUseTool } from './chain.tools.ts';
import { compileTool } from './compile.tool.ts';
import { deployTool } from './deploy.tool.ts';
import { registryListTool, registryLookupTool } from './registry.tools.ts';
import { simulateTool } from './simulate.tool.ts';
import { testTool } from './test.tool.ts';
import type { Tool } from './tool.ts';

/** The one table every front door serves: HTTP routes, POST /rpc tools and the MCP stdio server. */
export function toolTable(engine: Engine): Tool[] {
  return [
    compileTool(engine),
    testTool(engine),
    simulateTool(engine),
    deployTool(engine),
    callTool(engine),
    chainListTool(engine),
    chainRegisterTool(engine),
    chainUseTool(engine),
    artifactGetTool(engine),
    registryLookupTool(engine),
    registryListTool(engine),
  ];
}

/** The tools MCP clients see (over /rpc and stdio): the nine the spec names. */
export function mcpTools(tools: readonly Tool[]): Tool[] {
  return tools.filter((tool) => tool.tool !== undefined);
}
