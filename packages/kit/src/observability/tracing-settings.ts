import { ConfigError, type Env, read } from '../config.ts';

/**
 * Tracing's settings, read from the standard OpenTelemetry variables (the SDK's environment specification), from the
 * service's environment map rather than `process.env`, as every other setting: `platform up` hands each service its
 * own map. Undefined: tracing is off (no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none).
 */
export interface TracingSettings {
  /** Where spans are POSTed, OTLP/HTTP: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  readonly url: string;
  /**
   * OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the specification's
   * default, and under half the bytes of JSON for the same spans) or `http/json`.
   */
  readonly protocol: TracingProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over them (a collector's API key). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** OTEL_SERVICE_NAME; undefined: the service's own name. */
  readonly serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: { readonly kind: SamplerKind; readonly ratio: number };
  /** The batch span processor's OTEL_BSP_* settings. */
  readonly batch: { readonly scheduledDelayMs: number; readonly exportTimeoutMs: number; readonly maxQueueSize: number; readonly maxExportBatchSize: number };
}

/** Every OTEL_* setting read here (documented in the root README, Traces). */
export const tracingSettingNames = [
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
] as const;

export const tracingProtocols = ['http/protobuf', 'http/json'] as const;
export type TracingProtocol = (typeof tracingProtocols)[number];

export const samplerKinds = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerKind = (typeof samplerKinds)[number];

/**
 * @example readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })?.url // 'http://127.0.0.1:4318/v1/traces'
 */
export function readTracingSettings(env: Env): TracingSettings | undefined {
  if (read.boolean(env, 'OTEL_SDK_DISABLED', false)) return undefined;
  const exporter = read.string(env, 'OTEL_TRACES_EXPORTER', 'otlp');
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  const url = endpoint(env);
  if (url === undefined) return undefined;
  const protocol = read.optionalString(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? read.optionalString(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (!(tracingProtocols as readonly string[]).includes(protocol))
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL: the platform exports traces over OTLP/HTTP, as ${tracingProtocols.join(' or ')} (grpc is not offered), got "${protocol}"`,
    );
  const kind = read.string(env, 'OTEL_TRACES_SAMPLER', 'parentbased_always_on');
  if (!(samplerKinds as readonly string[]).includes(kind))
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${samplerKinds.join(', ')}, got "${kind}"`);
  const ratioText = read.string(env, 'OTEL_TRACES_SAMPLER_ARG', '1');
  const ratio = Number(ratioText);
  if (kind.endsWith('traceidratio') && !(ratioText.trim() !== '' && ratio >= 0 && ratio <= 1))
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${ratioText}"`);
  const timeoutMs = read.integer(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', read.integer(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, timeRange), timeRange);
  return {
    url,
    protocol: protocol as TracingProtocol,
    headers: { ...pairs(env, 'OTEL_EXPORTER_OTLP_HEADERS', false), ...pairs(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', false) },
    timeoutMs,
    serviceName: read.optionalString(env, 'OTEL_SERVICE_NAME'),
    resourceAttributes: pairs(env, 'OTEL_RESOURCE_ATTRIBUTES', true),
    sampler: { kind: kind as SamplerKind, ratio: kind.endsWith('traceidratio') ? ratio : 1 },
    batch: {
      scheduledDelayMs: read.integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, { min: 0, max: 600_000 }),
      exportTimeoutMs: read.integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, timeRange),
      maxQueueSize: read.integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048, { min: 1, max: 1_000_000 }),
      maxExportBatchSize: read.integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, { min: 1, max: 1_000_000 }),
    },
  };
}

const timeRange = { min: 1, max: 600_000 };

/** The OTEL_* settings of an environment: what a process the service starts must inherit (the router's daemons). */
export function tracingEnv(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith('OTEL_') && entry[1] !== undefined));
}

function endpoint(env: Env): string | undefined {
  const traces = read.optionalString(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return read.url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces, ['http:', 'https:']);
  const base = read.optionalString(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  read.url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', base, ['http:', 'https:']);
  // The general endpoint is the collector's root: each signal adds its own path (the specification's rule).
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * `key=value,key=value` with percent-encoded values (W3C Baggage's spelling, which the specification uses); `echo`
 * false keeps the text out of the error (headers carry a collector's API key).
 */
function pairs(env: Env, name: string, echo: boolean): Record<string, string> {
  const raw = read.optionalString(env, name);
  if (raw === undefined) return {};
  const found: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const key = at < 0 ? '' : part.slice(0, at).trim();
    if (key === '') throw new ConfigError(`${name} must be key=value pairs separated by commas${echo ? `, got "${part.trim()}"` : ''}`);
    try {
      found[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of ${key} is not valid percent-encoding`);
    }
  }
  return found;
}
