import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import type { Tool } from '../tools/tool.ts';
import { callerOf } from './caller.ts';

// Tool answers are JSON objects of many shapes (ABIs, traces); they are serialised as they are.
const anyData = okSchema(Type.Unknown());

/** One HTTP route per operation of the tool table: POST bodies and GET params plus query are the tool's input. */
export function registerToolRoutes(app: ServiceApp, tools: readonly Tool[]): void {
  for (const tool of tools) {
    const binding = tool.http;
    if (binding.method === 'POST') {
      app.post(binding.path, {
        schema: { description: tool.description, body: tool.input, response: { 200: anyData } },
        handler: async (request) => ({ ok: true as const, data: await tool.run(request.body as never, callerOf(request)) }),
      });
      continue;
    }
    app.get(binding.path, {
      schema: { description: tool.description, querystring: binding.query, ...(binding.params ? { params: binding.params } : {}), response: { 200: anyData } },
      handler: async (request) => {
        const input = { ...(request.params as object), ...(request.query as object) };
        return { ok: true as const, data: await tool.run(input as never, callerOf(request)) };
      },
    });
  }
}
