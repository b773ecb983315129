import { ServiceError } from '@platform/kit/errors';
import { tracedFetch } from '@platform/kit/observability/tracing';
import type { EmbeddingSettings } from '../config.ts';

/** Turns texts into vectors of one fixed length, in order. */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<number[][]>;
}

interface EmbeddingResponse {
  data?: { index?: number; embedding?: unknown }[];
}

/**
 * An OpenAI-compatible `POST {url}/embeddings` client: the platform's gateway or any provider. Vectors of another
 * length than configured are refused rather than stored, since one stray length would break the vector index.
 */
export function openAiEmbedder(settings: EmbeddingSettings): Embedder {
  return {
    model: settings.model,
    dimensions: settings.dimensions,
    async embed(texts) {
      if (texts.length === 0) return [];
      let response: Response;
      try {
        response = await tracedFetch(`${settings.url}/embeddings`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(settings.apiKey === '' ? {} : { authorization: `Bearer ${settings.apiKey}` }),
          },
          body: JSON.stringify({ model: settings.model, input: texts, encoding_format: 'float' }),
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (error) {
        throw new ServiceError('unavailable', 'the embedding endpoint did not answer', { cause: error });
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ServiceError('unavailable', `the embedding endpoint answered ${response.status}`);
      }
      const body = (await response.json().catch(() => ({}))) as EmbeddingResponse;
      const data = body.data ?? [];
      if (data.length !== texts.length)
        throw new ServiceError('unavailable', `the embedding endpoint returned ${data.length} vectors for ${texts.length} texts`);
      const vectors: number[][] = new Array(texts.length);
      for (const [position, entry] of data.entries()) {
        const vector = entry.embedding;
        if (!Array.isArray(vector) || vector.length !== settings.dimensions || !vector.every((value) => typeof value === 'number' && Number.isFinite(value)))
          throw new ServiceError('unavailable', `the embedding endpoint returned a vector that is not ${settings.dimensions} finite numbers`);
        // Each text's vector exactly once: a repeated or out-of-range index would give a memory another text's vector
        // and leave a gap the backfill could never fill.
        const index = entry.index ?? position;
        if (!Number.isInteger(index) || index < 0 || index >= texts.length || vectors[index] !== undefined)
          throw new ServiceError('unavailable', 'the embedding endpoint returned vectors whose indexes do not match the texts sent');
        vectors[index] = vector as number[];
      }
      return vectors;
    },
  };
}
