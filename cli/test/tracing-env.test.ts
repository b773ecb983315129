import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../services/router/src/config.ts';
import { serviceEnv } from '../src/up.ts';

const launch = { daemonEntry: '/dev/null', nodeFlags: [], consoleDir: '/dev/null' };

test('platform up: with tracing on, every service keeps its own service.name; an operator’s name becomes the namespace', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
  assert.equal(serviceEnv(endpoint, 'gateway').OTEL_SERVICE_NAME, 'gateway');
  assert.equal(serviceEnv(endpoint, 'gateway').OTEL_RESOURCE_ATTRIBUTES, undefined);
  const named = serviceEnv({ ...endpoint, OTEL_SERVICE_NAME: 'acme platform', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=dev' }, 'router');
  assert.deepEqual([named.OTEL_SERVICE_NAME, named.OTEL_RESOURCE_ATTRIBUTES], ['router', 'deployment.environment.name=dev,service.namespace=acme%20platform']);
  const ownNamespace = serviceEnv({ ...endpoint, OTEL_SERVICE_NAME: 'acme', OTEL_RESOURCE_ATTRIBUTES: 'service.namespace=prod' }, 'router');
  assert.equal(ownNamespace.OTEL_RESOURCE_ATTRIBUTES, 'service.namespace=prod');
  // Off: nothing about tracing is added.
  assert.deepEqual(
    Object.keys(serviceEnv({}, 'gateway')).filter((name) => name.startsWith('OTEL_')),
    [],
  );
});

test('the router hands its OTEL_* settings to every daemon it starts, as service daemon, whatever ROUTER_DAEMON_ENV lists', () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_SERVICE_NAME: 'router',
    OTEL_TRACES_SAMPLER: 'always_on',
    ROUTER_DAEMON_ENV: 'LOG_LEVEL',
  };
  const daemonEnv = loadConfig(env, launch).processProvider.daemonEnv;
  assert.deepEqual(daemonEnv, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'daemon', OTEL_TRACES_SAMPLER: 'always_on' });
  assert.deepEqual(loadConfig({ ROUTER_DAEMON_ENV: 'LOG_LEVEL' }, launch).processProvider.daemonEnv, {});
});
