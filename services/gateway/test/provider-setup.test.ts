import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startScriptedModel } from '@platform/testkit/scripted-model';
import OpenAI from 'openai';
import { defaultRateCardDir } from '../src/config.ts';
import { start } from '../src/main.ts';
import { callerHeaders, newActor } from './harness.ts';

/*
 * The README's "Pointing it at a model provider", followed as written: its settings and its rate card are read from
 * the README itself, so the steps and the code cannot drift apart. Only the provider is a local stand-in.
 */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Pointing it at a model provider'), readme.indexOf('## Endpoints'));
const block = (language: string) => section.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';
const documentedSettings = Object.fromEntries([...block('sh').matchAll(/\b([A-Z][A-Z0-9_]+)=(\S+)/g)].map((match) => [match[1], match[2]]));
const documentedCard = block('json');

test('pointed at an OpenAI-compatible provider as the README says: model_not_priced until the new rate card, then answered through the provider with its own model names and key', async () => {
  const provider = await startScriptedModel(() => 'hello from the provider');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-provider-'));
  const cards = mkdtempSync(path.join(os.tmpdir(), 'gateway-provider-cards-'));
  // A deployment's folder: the card it already published, the new version added beside it.
  copyFileSync(path.join(defaultRateCardDir, 'v1.json'), path.join(cards, 'v1.json'));
  const env = {
    ...documentedSettings,
    GATEWAY_UPSTREAM_URL: provider.url,
    GATEWAY_UPSTREAM_API_KEY: 'sk-provider-key-1f2e',
    GATEWAY_RATE_CARD_DIR: cards,
    PLATFORM_GATEWAY_TOKEN: 'gateway-token-for-provider-test',
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
  };
  const model = documentedSettings.GATEWAY_MODEL_M1 as string;
  const chat = async (url: string) => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: env.PLATFORM_GATEWAY_TOKEN, defaultHeaders: callerHeaders(newActor()), maxRetries: 0 });
    return client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  };
  try {
    assert.match(model, /^accounts\/[^/]+\/models\/[^/]+$/, 'the README names a model id the gateway takes');
    let gateway = await start(env, { handleSignals: false });
    try {
      await assert.rejects(chat(gateway.url), (error: { status: number; code: string }) => error.status === 400 && error.code === 'model_not_priced');
      assert.equal(provider.received.length, 0, 'never forwarded unpriced');
    } finally {
      await gateway.stop();
    }

    writeFileSync(path.join(cards, 'v2.json'), documentedCard);
    gateway = await start(env, { handleSignals: false });
    try {
      const { data, response } = await chat(gateway.url);
      assert.equal(data.choices[0]?.message.content, 'hello from the provider');
      assert.equal(response.headers.get('x-platform-rate-table-version'), '2');
      const [received] = provider.received;
      assert.equal(received?.model, model.split('/').at(-1), 'GATEWAY_UPSTREAM_MODEL_ID=short sends the provider’s own name');
      assert.equal(received?.headers.authorization, `Bearer ${env.GATEWAY_UPSTREAM_API_KEY}`);
    } finally {
      await gateway.stop();
    }
  } finally {
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cards, { recursive: true, force: true });
  }
});
