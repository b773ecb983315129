import { context, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { encodeTraceExportRequest } from './otlp-trace-encoding.ts';
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
      new BatchSpanProcessor(settings.protocol === 'http/json' ? new JsonExporter(exporterOptions) : protobufExporter(exporterOptions), {
        scheduledDelayMillis: settings.batch.scheduledDelayMs,
        exportTimeoutMillis: settings.batch.exportTimeoutMs,
        maxQueueSize: settings.batch.maxQueueSize,
        maxExportBatchSize: settings.batch.maxExportBatchSize,
      }),
    ],
  });
  return { tracer: provider.getTracer(`@platform/${service}`), shutdown: () => provider.shutdown() };
}

/**
 * The SDK's OTLP/HTTP protobuf exporter (its transport, retries, timeouts and headers), each request written by our
 * encoder (otlp-trace-encoding.ts: the SDK serializer's bytes, in half its time or less).
 */
function protobufExporter(options: { url: string; headers: Record<string, string>; timeoutMillis: number }): SpanExporter {
  const serializer = { serializeRequest: encodeTraceExportRequest, deserializeResponse: ProtobufTraceSerializer.deserializeResponse };
  const transport = convertLegacyHttpOptions(options, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(transport, serializer, 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined));
}

function samplerOf({ kind, ratio }: TracingSettings['sampler']): Sampler {
  const root = kind.endsWith('always_off')
    ? new AlwaysOffSampler()
    : kind.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return kind.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}
