import { ConfigError, type Env, read } from './config.ts';

/**
 * The spec's four model labels and its per-slot free-tier whitelist, shared by the gateway (which enforces it) and
 * the daemon (which picks its compiler, planner and executor models from it), so both read one mapping from the
 * same settings (`GATEWAY_MODEL_M1` … `M4`).
 */
export const slots = ['compiler', 'planner', 'executor'] as const;
export type Slot = (typeof slots)[number];

export const modelLabels = ['M1', 'M2', 'M3', 'M4'] as const;
export type ModelLabel = (typeof modelLabels)[number];

/** The spec's free-tier whitelist, by label (M2 is the compiler's low-confidence escalation target). */
export const slotWhitelist: Record<Slot, readonly ModelLabel[]> = {
  compiler: ['M1', 'M2'],
  planner: ['M1', 'M3', 'M2'],
  executor: ['M3', 'M4'],
};

/** Illustrative Fireworks ids; every deployment should set its own. */
export const defaultModelIds: Readonly<Record<ModelLabel, string>> = {
  M1: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
  M2: 'accounts/fireworks/models/llama-v3p3-70b-instruct',
  M3: 'accounts/fireworks/models/qwen2p5-coder-32b-instruct',
  M4: 'accounts/fireworks/models/deepseek-v3',
};

/** `accounts/<provider>/models/<model>`: no empty segment, no slash or whitespace inside one. */
export const modelIdShape = /^accounts\/([^/\s]+)\/models\/([^/\s]+)$/;

export function isModelId(value: string): boolean {
  return value.length <= 256 && modelIdShape.test(value);
}

function modelId(env: Env, name: string, fallback: string): string {
  const value = read.string(env, name, fallback);
  if (!isModelId(value)) throw new ConfigError(`${name} must be a model id of the form accounts/<provider>/models/<model>, got "${value}"`);
  return value;
}

/**
 * The ids behind M1–M4 from `GATEWAY_MODEL_M1` … `M4`, defaults otherwise.
 *
 * @example const labels = readModelLabels(env); labels.M2
 */
export function readModelLabels(env: Env): Readonly<Record<ModelLabel, string>> {
  return Object.freeze({
    M1: modelId(env, 'GATEWAY_MODEL_M1', defaultModelIds.M1),
    M2: modelId(env, 'GATEWAY_MODEL_M2', defaultModelIds.M2),
    M3: modelId(env, 'GATEWAY_MODEL_M3', defaultModelIds.M3),
    M4: modelId(env, 'GATEWAY_MODEL_M4', defaultModelIds.M4),
  });
}

/**
 * A model setting given as a label (`M2`) or a full id; undefined when unset. With `slot`, the model must be one of
 * that slot's whitelisted models (a pin outside the whitelist would be refused by the gateway on every call).
 *
 * @example const planner = readModelChoice(env, 'PLATFORM_PLANNER_MODEL', labels, 'planner') ?? labels.M2
 */
export function readModelChoice(env: Env, name: string, labels: Readonly<Record<ModelLabel, string>>, slot?: Slot): string | undefined {
  const raw = read.optionalString(env, name);
  if (raw === undefined) return undefined;
  const id = (modelLabels as readonly string[]).includes(raw) ? labels[raw as ModelLabel] : raw;
  if (!isModelId(id)) throw new ConfigError(`${name} must be a label M1–M4 or a model id accounts/<provider>/models/<model>, got "${raw}"`);
  if (slot === undefined) return id;
  const allowed = slotWhitelist[slot].map((label) => labels[label]);
  if (!allowed.includes(id))
    throw new ConfigError(`${name} must be one of the ${slot} slot's models (${slotWhitelist[slot].join(', ')}: ${allowed.join(', ')}), got "${raw}"`);
  return id;
}
