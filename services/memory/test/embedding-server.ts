import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for an OpenAI-compatible embeddings provider (`POST /v1/embeddings`), so the semantic channel
 * can be tested without reaching a real model. Its vectors are deterministic and crude but have the one property
 * the tests need: words that mean the same thing land close together. Each text is lowercased, split into words,
 * stripped of stop words and a plural "s", and every word is mapped through a small synonym table to a canonical
 * word; each canonical word is hashed (with the model name, so two models disagree the way real ones do) into a
 * few signed dimensions, and the sum is L2-normalised.
 */

/**
 * ok: answer; fail: 503; hang: never answer (until close); wrong-length: vectors one longer than configured;
 * reversed: the data in reverse order, each entry with its right index (allowed by the protocol); index-zero: every
 * entry with index 0 (a broken provider).
 */
export type EmbeddingServerMode = 'ok' | 'fail' | 'hang' | 'wrong-length' | 'reversed' | 'index-zero';

export interface EmbeddingServerOptions {
  /** Length of the vectors (default 64). */
  dimensions?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get 401. */
  apiKey?: string;
}

export interface EmbeddingServer {
  /** Base URL as MEMORY_EMBEDDINGS_URL takes it: `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  mode: EmbeddingServerMode;
  dimensions: number;
  apiKey: string | undefined;
  /** POST /v1/embeddings requests received (answered or not). */
  readonly requests: number;
  /** Texts embedded successfully (a refused or failed request adds none). */
  readonly texts: number;
  readonly lastModel: string | undefined;
  /** The Authorization header of the last request, as sent. */
  readonly lastAuthorization: string | undefined;
  /** Every model asked for, in order of first appearance. */
  readonly models: readonly string[];
  /** The vector this server answers for a text under a model (for expectations). */
  vectorOf(text: string, model: string): number[];
  close(): Promise<void>;
}

const stopWords = new Set([
  'a',
  'an',
  'and',
  'are',
  'at',
  'did',
  'do',
  'does',
  'for',
  'has',
  'have',
  'i',
  'in',
  'is',
  'it',
  'me',
  'my',
  'of',
  'on',
  'or',
  's',
  'the',
  'their',
  'to',
  'user',
  'was',
  'what',
  'where',
  'which',
  'who',
  'with',
]);

const synonymGroups: Record<string, readonly string[]> = {
  car: ['car', 'automobile', 'vehicle', 'auto', 'motorcar'],
  doctor: ['doctor', 'physician', 'gp', 'medic', 'dr'],
  flat: ['flat', 'apartment', 'condo'],
  dog: ['dog', 'puppy', 'hound', 'pooch'],
  job: ['job', 'work', 'works', 'employment', 'occupation', 'employer', 'profession'],
  allergy: ['allergy', 'allergic', 'intolerance', 'intolerant'],
  spouse: ['spouse', 'wife', 'husband', 'partner', 'married'],
  drive: ['drive', 'drives', 'driving', 'drove'],
};

const canonical = new Map<string, string>(Object.entries(synonymGroups).flatMap(([word, synonyms]) => synonyms.map((synonym) => [synonym, word] as const)));

function canonicalWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0];
    if (stopWords.has(word)) continue;
    const known = canonical.get(word) ?? canonical.get(word.replace(/s$/, ''));
    words.push(known ?? (word.length > 3 ? word.replace(/s$/, '') : word));
  }
  return words;
}

/** Deterministic vector of `dimensions` numbers, unit length; synonyms share their canonical word's dimensions. */
export function embeddingOf(text: string, model: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = canonicalWords(text);
  // A text with no content words still gets a (fixed) direction: a zero vector has no cosine.
  for (const word of words.length === 0 ? [''] : words) {
    const digest = createHash('sha256').update(`${model}\u0000${word}`).digest();
    for (let slot = 0; slot < 3; slot++) {
      const index = digest.readUInt32BE(slot * 4) % dimensions;
      const sign = (digest[16 + slot] ?? 0) & 1 ? 1 : -1;
      vector[index] = (vector[index] ?? 0) + sign;
    }
  }
  let norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  if (norm === 0) {
    vector[0] = 1;
    norm = 1;
  }
  return vector.map((value) => value / norm);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function apiError(response: ServerResponse, status: number, message: string, type: string): void {
  sendJson(response, status, { error: { message, type, param: null, code: null } });
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the fake provider on 127.0.0.1 and a free port. */
export async function startEmbeddingServer(options: EmbeddingServerOptions = {}): Promise<EmbeddingServer> {
  let requests = 0;
  let texts = 0;
  let lastModel: string | undefined;
  let lastAuthorization: string | undefined;
  const models: string[] = [];
  const hung = new Set<ServerResponse>();

  const state = {
    mode: 'ok' as EmbeddingServerMode,
    dimensions: options.dimensions ?? 64,
    apiKey: options.apiKey,
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') return apiError(response, 404, `no route ${request.method} ${request.url}`, 'not_found');
    requests++;
    lastAuthorization = request.headers.authorization;
    const raw = await readBody(request);
    if (state.apiKey !== undefined && request.headers.authorization !== `Bearer ${state.apiKey}`)
      return apiError(response, 401, 'Incorrect API key provided.', 'invalid_request_error');
    let body: { model?: unknown; input?: unknown };
    try {
      body = JSON.parse(raw);
    } catch {
      return apiError(response, 400, 'body is not JSON', 'invalid_request_error');
    }
    if (typeof body.model !== 'string' || body.model === '') return apiError(response, 400, 'model is required', 'invalid_request_error');
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((entry) => typeof entry === 'string'))
      return apiError(response, 400, 'input must be a string or a non-empty array of strings', 'invalid_request_error');
    lastModel = body.model;
    if (!models.includes(body.model)) models.push(body.model);
    if (state.mode === 'fail') return apiError(response, 503, 'The server is overloaded.', 'server_error');
    if (state.mode === 'hang') {
      hung.add(response);
      response.on('close', () => hung.delete(response));
      return;
    }
    const length = state.mode === 'wrong-length' ? state.dimensions + 1 : state.dimensions;
    const model = body.model;
    const data = (input as string[]).map((text, index) => ({
      object: 'embedding',
      index: state.mode === 'index-zero' ? 0 : index,
      embedding: embeddingOf(text, model, length),
    }));
    if (state.mode === 'reversed') data.reverse();
    const tokens = (input as string[]).reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);
    texts += input.length;
    sendJson(response, 200, { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) apiError(response, 500, String(error), 'server_error');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    get mode() {
      return state.mode;
    },
    set mode(mode: EmbeddingServerMode) {
      state.mode = mode;
    },
    get dimensions() {
      return state.dimensions;
    },
    set dimensions(dimensions: number) {
      state.dimensions = dimensions;
    },
    get apiKey() {
      return state.apiKey;
    },
    set apiKey(apiKey: string | undefined) {
      state.apiKey = apiKey;
    },
    get requests() {
      return requests;
    },
    get texts() {
      return texts;
    },
    get lastModel() {
      return lastModel;
    },
    get lastAuthorization() {
      return lastAuthorization;
    },
    get models() {
      return models;
    },
    vectorOf: (text, model) => embeddingOf(text, model, state.dimensions),
    async close() {
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
