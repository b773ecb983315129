import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readTracingSettings, tracingEnv, tracingSettingNames } from './tracing-settings.ts';

test('the standard OTEL_* variables: the endpoints, headers, sampler, resource and batch settings', () => {
  assert.equal(readTracingSettings({}), undefined);
  assert.equal(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SDK_DISABLED: 'true' }), undefined);
  const settings = readTracingSettings({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=one,x-team=a%20b',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=two',
    OTEL_SERVICE_NAME: 'edge',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod, service.namespace=platform',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  assert.deepEqual(settings, {
    url: 'http://collector:4318/v1/traces',
    protocol: 'http/protobuf',
    headers: { 'x-api-key': 'two', 'x-team': 'a b' },
    timeoutMs: 10_000,
    serviceName: 'edge',
    resourceAttributes: { 'deployment.environment.name': 'prod', 'service.namespace': 'platform' },
    sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
    batch: { scheduledDelayMs: 100, exportTimeoutMs: 30_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
  });
  // Protobuf unless JSON is asked for; the traces variable wins over the general one.
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  assert.equal(readTracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol, 'http/json');
  assert.equal(
    readTracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol,
    'http/protobuf',
  );
  // The traces endpoint is used as it is written.
  assert.equal(readTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/custom' })?.url, 'https://otel.example/custom');
});

test('a bad setting names itself, and never echoes a header (it may hold an API key)', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  assert.throws(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT must use http: or https:/);
  assert.throws(() => readTracingSettings({ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER must be one of always_on/);
  assert.throws(
    () => readTracingSettings({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }),
    /OTEL_TRACES_SAMPLER_ARG must be a ratio/,
  );
  assert.throws(
    () => readTracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    /over OTLP\/HTTP, as http\/protobuf or http\/json \(grpc is not offered\), got "grpc"/,
  );
  assert.throws(() => readTracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER must be otlp or none/);
  assert.throws(
    () => readTracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'secret-key-without-name' }),
    (error: Error) => /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/.test(error.message) && !error.message.includes('secret-key'),
  );
});

test('tracingEnv: the OTEL_* settings a child process inherits, nothing else', () => {
  assert.deepEqual(tracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'router', PATH: '/bin', LEDGER_TOKEN: 'x' }), {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    OTEL_SERVICE_NAME: 'router',
  });
});

test('tracingSettingNames lists every OTEL_* setting the reader reads (the deploy checks take it as documented)', () => {
  const source = readFileSync(new URL('./tracing-settings.ts', import.meta.url), 'utf8');
  const named = new Set([...source.matchAll(/'(OTEL_[A-Z_]+)'/g)].map((match) => match[1]));
  assert.deepEqual(new Set(tracingSettingNames), named);
});
