import { context, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './tracing-settings.ts';

/*
 * The OpenTelemetry SDK, loaded only when a service switches tracing on (tracing.ts imports this file on demand).
 */

let processWide = false;

/**
 * Once per process, whatever the number of services in it: the AsyncLocalStorage context manager and the W3C trace
 * context propagator. No global tracer provider is registered: each service has its own (its own `service.name`),
 * and code asks the active context which one to use (tracing.ts).
 */
function installProcessWide(): void {
  if (processWide) return;
  processWide = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** One service's provider: its resource, sampler, and a batch processor exporting OTLP/HTTP (protobuf or JSON) to the collector. */
export function startProvider(settings: TracingSettings, service: string): { tracer: Tracer; shutdown(): Promise<void> } {
  installProcessWide();
  // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES (the specification's order), both over the service's own.
  const name = settings.serviceName ?? settings.resourceAttributes[ATTR_SERVICE_NAME] ?? service;
  const exporterOptions = { url: settings.url, headers: { ...settings.headers }, timeoutMillis: settings.timeoutMs };
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: name })),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [
      new BatchSpanProcessor(new (settings.protocol === 'http/json' ? JsonExporter : ProtobufExporter)(exporterOptions), {
        scheduledDelayMillis: settings.batch.scheduledDelayMs,
        exportTimeoutMillis: settings.batch.exportTimeoutMs,
        maxQueueSize: settings.batch.maxQueueSize,
        maxExportBatchSize: settings.batch.maxExportBatchSize,
      }),
    ],
  });
  return { tracer: provider.getTracer(`@platform/${service}`), shutdown: () => provider.shutdown() };
}

function samplerOf({ kind, ratio }: TracingSettings['sampler']): Sampler {
  const root = kind.endsWith('always_off')
    ? new AlwaysOffSampler()
    : kind.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return kind.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}
