import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runPlatform } from '@platform/testkit/run-command';
import { connectors } from '../src/connectors/index.ts';
import type { ConnectorDefinition } from '../src/connectors/types.ts';
import { generateRegistry, parseRegistry, registryFormat, registryVersion } from '../src/mcp/registry.ts';

const platform = (args: string[]) => runPlatform(args);

describe('the connector tool registry', () => {
  test('`platform connector registry` prints JSON with the format, the version, every tool and one connect tool per connector', async () => {
    const run = await platform(['connector', 'registry']);
    assert.equal(run.code, 0, run.stderr);
    const registry = JSON.parse(run.stdout);
    assert.deepEqual([registry.format, registry.version], [registryFormat, registryVersion]);
    const expected = connectors.flatMap((connector) => [...connector.tools.map((tool) => `${connector.id}_${tool.name}`), `${connector.id}_connect`]);
    assert.deepEqual(
      registry.tools.map((tool: { name: string }) => tool.name),
      expected,
    );
    assert.deepEqual(parseRegistry(run.stdout, 'tools.json'), generateRegistry(), 'what the proxy reads back is what was generated');
  });

  test('names are stable; each tool maps to its connector tool, with its schema and the hints its consequence implies', () => {
    const tools = new Map(generateRegistry().tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(
      [...tools.keys()],
      [
        'google-workspace_mail_send',
        'google-workspace_mail_search',
        'google-workspace_mail_read',
        'google-workspace_calendar_list',
        'google-workspace_calendar_create',
        'google-workspace_calendar_update',
        'google-workspace_connect',
      ],
    );
    for (const connector of connectors)
      for (const definition of connector.tools) {
        const tool = tools.get(`${connector.id}_${definition.name}`);
        assert.deepEqual(tool?._meta['platform/connector'], {
          connector: connector.id,
          tool: definition.name,
          confirmation: definition.consequential ? 'required' : 'none',
        });
        assert.deepEqual(tool?.inputSchema, definition.arguments);
        assert.equal(tool?.annotations.readOnlyHint, !definition.consequential, definition.name);
        assert.equal(tool?.annotations.destructiveHint, definition.consequential, definition.name);
        assert.equal(tool?.annotations.openWorldHint, definition.consequential, definition.name);
      }
    assert.deepEqual(tools.get('google-workspace_connect')?._meta['platform/connector'], {
      connector: 'google-workspace',
      action: 'connect',
      confirmation: 'none',
    });
  });

  test('a definition that would give two tools one name (a tool called connect) is refused', () => {
    const [workspace] = connectors as [ConnectorDefinition];
    const clash = { ...workspace, tools: [...workspace.tools, { ...(workspace.tools[0] as ConnectorDefinition['tools'][number]), name: 'connect' }] };
    assert.throws(() => generateRegistry([clash]), /registry tool name "google-workspace_connect" is used twice/);
  });

  test('a registry the proxy does not understand is refused with a message naming the file and the fix', () => {
    const registry = generateRegistry();
    const text = (value: unknown) => JSON.stringify(value);
    assert.throws(() => parseRegistry('{', 'tools.json'), /tools\.json is not JSON; write it with `npx platform connector registry > tools\.json`/);
    assert.throws(() => parseRegistry(text({ ...registry, format: 'other' }), 't.json'), /t\.json is not a connector tool registry/);
    assert.throws(() => parseRegistry(text({ ...registry, version: 2 }), 't.json'), /t\.json is registry version 2; this proxy reads version 1 only/);
    const [first] = registry.tools;
    assert.throws(() => parseRegistry(text({ ...registry, tools: [first, first] }), 't.json'), /t\.json tools\[1\] repeats the name/);
    assert.throws(
      () => parseRegistry(text({ ...registry, tools: [{ ...first, _meta: {} }] }), 't.json'),
      /tools\[0\] \(google-workspace_mail_send\) needs _meta/,
    );
  });
});
