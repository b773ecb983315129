import { canonicalJson } from '@platform/kit/canonical-json';
import { keccak256, toBytes } from 'viem';

/**
 * The service manifest (version 1): what a developer publishes and the marketplace routes, prices and searches by.
 * `listings/manifest.ts` validates it against the published JSON schema; this file is the shape every part
 * of the service shares.
 */
export interface Manifest {
  version: 1;
  /** Shown in the catalog. */
  display_name: string;
  summary: string;
  /** What kind of service: `api`, `model`, `agent`, `data` or `tool`. */
  kind: ManifestKind;
  /** Base URL of the provider (https; http only on loopback/private addresses in development); absent for a hosted listing, whose calls go to its running deployment. */
  endpoint?: string;
  /** Default timeout of a call, ms; an operation may lower or raise it (capped by the marketplace's limit). */
  timeout_ms: number;
  /** Whether the provider keeps inputs confidential (a discovery filter). */
  confidential: boolean;
  tags: string[];
  operations: ManifestOperation[];
}

export const manifestKinds = ['api', 'model', 'agent', 'data', 'tool'] as const;
export type ManifestKind = (typeof manifestKinds)[number];

export interface ManifestOperation {
  /** `[a-z][a-z0-9_.-]{0,63}`, unique in the manifest. */
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12 subset Ajv accepts) of `args`. */
  input_schema: Record<string, unknown>;
  /** JSON Schema of the provider's `result`. */
  output_schema: Record<string, unknown>;
  pricing: OperationPricing;
  /** Path appended to `endpoint`; default `/<name>`. */
  path?: string;
  timeout_ms?: number;
}

export interface OperationPricing {
  /** What is counted: `call`, `token`, `second`, `byte`, `item` (display only; the arithmetic is the same). */
  unit: string;
  /** Settlement-unit decimal with at most 6 places, e.g. `0.002000`. */
  price_per_unit: string;
  /** The most units one call may bill: price_per_unit × max_units is the call's cap. */
  max_units: number;
}

/** keccak256 of the manifest's RFC 8785 canonical JSON, 0x hex: what the on-chain registry records. */
export function manifestHash(manifest: Manifest): string {
  return keccak256(toBytes(canonicalJson(manifest)));
}

/** The text the catalog's full-text search indexes: name, summary, tags, operation names and descriptions. */
export function searchDocumentOf(manifest: Pick<Manifest, 'display_name' | 'summary' | 'tags' | 'operations'>): string {
  return [
    manifest.display_name,
    manifest.summary,
    manifest.tags.join(' '),
    ...manifest.operations.map((operation) => `${operation.name.replace(/[_.-]/g, ' ')} ${operation.description}`),
  ].join('\n');
}
