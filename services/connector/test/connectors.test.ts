import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCredential, encodeCredential } from '../src/connections/credential.ts';
import { checkConnectors, connectorById, connectors } from '../src/connectors/index.ts';
import type { ConnectorDefinition } from '../src/connectors/types.ts';
import { workspaceConnector } from '../src/connectors/workspace/definition.ts';

const second: ConnectorDefinition = {
  id: 'other-suite',
  name: 'Other',
  description: 'A second connector, to show one is a folder of data.',
  scopes: [{ id: 'files.read', description: 'Read files' }],
  tools: [
    {
      name: 'files_list',
      description: 'List files',
      scope: 'files.read',
      consequential: false,
      arguments: { type: 'object', properties: {}, required: [], additionalProperties: false },
      run: async () => ({ files: [] }),
    },
  ],
  oauth: {
    provider: 'OTHER',
    authorizeUrl: 'https://other.example/authorize',
    tokenUrl: 'https://other.example/token',
    revokeUrl: 'https://other.example/revoke',
    authorizeParams: {},
    clientAuth: 'client_secret_basic',
  },
};

describe('connector definitions', () => {
  test('the shipped list passes its checks, and a second connector beside it does too', () => {
    checkConnectors(connectors);
    checkConnectors([...connectors, second]);
    assert.equal(connectorById('google-workspace'), workspaceConnector);
    assert.equal(connectorById('nope'), undefined);
  });

  test('refused: a bad or repeated id, a repeated tool name, a tool whose scope the connector does not ask for', () => {
    assert.throws(() => checkConnectors([{ ...second, id: 'Other Suite' }]), /must be 1 to 64/);
    assert.throws(() => checkConnectors([second, second]), /listed twice/);
    assert.throws(() => checkConnectors([{ ...second, tools: [...second.tools, ...second.tools] }]), /bad or repeated/);
    assert.throws(
      () => checkConnectors([{ ...second, tools: [{ ...(second.tools[0] as ConnectorDefinition['tools'][number]), scope: 'files.write' }] }]),
      /does not ask for/,
    );
  });

  test('every workspace tool names one of its two scopes, and exactly send, create and update are consequential', () => {
    assert.deepEqual(
      workspaceConnector.tools.filter((tool) => tool.consequential).map((tool) => tool.name),
      ['mail_send', 'calendar_create', 'calendar_update'],
    );
  });
});

describe('credential encoding', () => {
  test('round-trips, and a decoding error quotes none of the bytes', () => {
    const credential = { accessToken: 'ya29.abc', refreshToken: '1//def', expiresAt: new Date('2026-03-01T13:00:00Z') };
    assert.deepEqual(decodeCredential(encodeCredential(credential)), credential);
    assert.throws(
      () => decodeCredential(Buffer.from('ya29.secret-not-json')),
      (error: unknown) => !(error as Error).message.includes('secret'),
    );
    assert.throws(() => decodeCredential(Buffer.from('{"access_token":"ya29.x"}')), /lacks/);
  });
});
