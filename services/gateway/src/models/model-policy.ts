/**
 * Which models a free-tier caller may use: the spec's per-slot whitelist over the labels M1–M4 (mapped to real
 * model ids by configuration), narrowed by the planner and executor pins, plus the configured embedding models.
 */

import { type ModelLabel, modelIdShape, type Slot, slotWhitelist } from '@platform/kit/model-labels';

// The labels, slots and whitelist are the kit's, shared with the daemon that picks its models from them.
export { isModelId, type ModelLabel, modelLabels, type Slot, slots, slotWhitelist } from '@platform/kit/model-labels';

/** What the upstream is sent: the full id (Fireworks-style upstreams) or only the `<model>` segment. */
export type UpstreamModelNaming = 'full' | 'short';

export function upstreamModelName(modelId: string, naming: UpstreamModelNaming): string {
  if (naming === 'full') return modelId;
  return modelIdShape.exec(modelId)?.[2] ?? modelId;
}

export interface ModelPolicySettings {
  readonly labels: Readonly<Record<ModelLabel, string>>;
  /** The one model the slot may use on the free tier; undefined leaves the slot's whole whitelist. */
  readonly pins: Readonly<Partial<Record<'planner' | 'executor', string>>>;
  readonly embeddingModels: readonly string[];
}

export type ModelDecision = { allowed: true } | { allowed: false; reason: string };

/** The free-tier rules, resolved once from the settings. BYO calls never consult it. */
export class ModelPolicy {
  readonly #chat: Record<Slot, ReadonlySet<string>>;
  readonly #embeddings: ReadonlySet<string>;
  readonly #settings: ModelPolicySettings;

  constructor(settings: ModelPolicySettings) {
    this.#settings = settings;
    const allowed = (slot: Slot): Set<string> => {
      const pin = slot === 'compiler' ? undefined : settings.pins[slot];
      return pin === undefined ? new Set(slotWhitelist[slot].map((label) => settings.labels[label])) : new Set([pin]);
    };
    this.#chat = { compiler: allowed('compiler'), planner: allowed('planner'), executor: allowed('executor') };
    this.#embeddings = new Set(settings.embeddingModels);
  }

  /** Every model id a free-tier caller can reach, to check against the rate card at start. */
  reachableModels(): string[] {
    return [...new Set([...this.#chat.compiler, ...this.#chat.planner, ...this.#chat.executor, ...this.#embeddings])];
  }

  chatModelsFor(slot: Slot): readonly string[] {
    return [...this.#chat[slot]];
  }

  decideChat(slot: Slot, model: string): ModelDecision {
    if (this.#chat[slot].has(model)) return { allowed: true };
    const pin = slot === 'compiler' ? undefined : this.#settings.pins[slot];
    const reason = pin
      ? `the ${slot} slot is pinned to ${pin} (PLATFORM_${slot.toUpperCase()}_MODEL); ${model} is not available on the free tier`
      : `${model} is not on the free-tier whitelist of the ${slot} slot (${[...this.#chat[slot]].join(', ')}); use your own key (X-Platform-BYO-API-Key) for other models`;
    return { allowed: false, reason };
  }

  decideEmbedding(model: string): ModelDecision {
    if (this.#embeddings.has(model)) return { allowed: true };
    const list = [...this.#embeddings].join(', ') || 'none configured';
    return { allowed: false, reason: `${model} is not a free-tier embedding model (${list}); use your own key (X-Platform-BYO-API-Key) for other models` };
  }
}
