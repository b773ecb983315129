import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DaemonClient } from '@platform/client/daemon-client';
import { delegate } from '@platform/client/delegate';
import { describeSpans, type OtlpReceiver, type ReceivedSpan, spanKinds, startOtlpReceiver } from '@platform/testkit/otlp-receiver';
import { platformEngine, type RunningPlatform, startPlatform } from '@platform/testkit/platform-up';
import { compiled, railScript, toolStep } from '@platform/testkit/rail-script';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { assertObserveOutput } from './observe-check.ts';

/*
 * Issue 35's traces, end to end: `platform up` as a child process exporting to a local OTLP/HTTP receiver
 * (OTEL_EXPORTER_OTLP_ENDPOINT), a scripted model behind the real gateway, and one delegated intent through the router
 * to the user's daemon (a process the router starts). The intent's walk sets an alarm (the scheduler) and reads the
 * balance (settlement, through one of its front threads): one trace must hold the spans of every process it touched,
 * each span's parent a span of the same trace.
 */

const engines = [platformEngine()];

for (const engine of engines)
  describe(`one delegated intent is one trace across the platform's processes, on ${engine.name}`, () => {
    let receiver: OtlpReceiver;
    let model: ScriptedModel;
    let platform: RunningPlatform | undefined;
    before(async () => {
      receiver = await startOtlpReceiver();
      model = await startScriptedModel();
      platform = await startPlatform({
        ...(engine.postgresAdminUrl ? { postgresAdminUrl: engine.postgresAdminUrl } : {}),
        args: ['--observe'],
        env: {
          GATEWAY_UPSTREAM_URL: model.url,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          // Spans leave every fifth of a second, so the test reads them soon after the intent ends.
          OTEL_BSP_SCHEDULE_DELAY: '200',
        },
      });
    });
    after(async () => {
      await model?.close();
      const code = await platform?.stop();
      await receiver?.close();
      assert.equal(code, 0);
    });

    test('platform up --observe prints every service’s metrics URL, each answering with the bearer it names, and writes a Prometheus config for them', async () => {
      await assertObserveOutput(platform as RunningPlatform, /^traces: exported over OTLP\/HTTP to http:\/\/127\.0\.0\.1:\d+/m);
    });

    test('router, daemon, gateway, scheduler and settlement spans share the intent’s trace id, each child under a span of the trace', async () => {
      const running = platform as RunningPlatform;
      model.setScript(
        railScript({
          compile: compiled('remind me to water the plants and tell me my balance'),
          plans: [
            {
              steps: [
                toolStep('remind', 'alarms.set', { wake_message: 'water the plants', delay_seconds: 3600 }),
                toolStep('balance', 'payments.balance', {}, ['remind']),
              ],
            },
          ],
          answer: 'Reminder set; your balance is 0.',
        }),
      );
      const client = new DaemonClient({ baseUrl: running.url('router'), token: await running.token() });
      let intentId = '';
      const answer = await delegate(client, 'remind me to water the plants and tell me my balance', {
        approver: async () => ({ approved: true, answer: 'approve' }),
        pollIntervalMs: 250,
        onSubmitted: (id) => {
          intentId = id;
        },
      });
      assert.equal(answer, 'Reminder set; your balance is 0.');

      // The daemon's span of the walk names the intent; its trace is the one the submission began at the router.
      const intentSpan = (spans: readonly ReceivedSpan[]) =>
        spans.find((span) => span.service === 'daemon' && span.name === 'intent' && span.attributes['platform.intent.id'] === intentId);
      const inTrace = (spans: readonly ReceivedSpan[]) => {
        const walk = intentSpan(spans);
        return walk === undefined ? [] : spans.filter((span) => span.traceId === walk.traceId);
      };
      const wanted = ['router', 'daemon', 'gateway', 'scheduler', 'settlement'];
      const spans = inTrace(
        await receiver.waitFor(
          (all) => {
            const trace = inTrace(all);
            return wanted.every((service) => trace.some((span) => span.service === service)) && trace.some((span) => span.name === 'rail walk');
          },
          `spans of ${wanted.join(', ')} in the trace of intent ${intentId}`,
        ),
      );
      const trace = describeSpans(spans);
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const parentOf = (span: ReceivedSpan) => (span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId));

      // One root: the router's server span of the submission, every other span's parent is a span of this trace.
      const roots = spans.filter((span) => span.parentSpanId === undefined);
      assert.equal(roots.length, 1, `one root span in ${trace}`);
      assert.deepEqual([roots[0]?.service, roots[0]?.kind, roots[0]?.attributes['http.request.method']], ['router', spanKinds.server, 'POST']);
      for (const span of spans) if (span !== roots[0]) assert.ok(parentOf(span), `the parent of ${span.service} ${span.name} is in the trace: ${trace}`);

      // Every hop between processes: a server span whose parent is the calling service's client span.
      const served = (service: string, name: RegExp) => {
        const span = spans.find((candidate) => candidate.service === service && candidate.kind === spanKinds.server && name.test(candidate.name));
        assert.ok(span, `a ${service} server span ${name} in ${trace}`);
        return span;
      };
      const calledBy = (span: ReceivedSpan, caller: string) => {
        const parent = parentOf(span);
        assert.deepEqual([parent?.service, parent?.kind], [caller, spanKinds.client], `${span.service} ${span.name} is called by ${caller}: ${trace}`);
        return parent as ReceivedSpan;
      };
      // The delegation client submits with POST /messages/async; the walk runs after the answer, in the same trace.
      calledBy(served('daemon', /^POST \/messages\/async$/), 'router');
      const completion = served('gateway', /^POST \/v1\/chat\/completions$/);
      calledBy(completion, 'daemon');
      calledBy(served('scheduler', /^POST \/v1\/alarms$/), 'daemon');
      calledBy(served('settlement', /^GET \/v1\/balance$/), 'daemon');
      // The tool servers the plan lists are asked over MCP's HTTP transport, which carries the trace too.
      calledBy(served('memory', /^POST \/mcp$/), 'daemon');
      calledBy(served('contracts', /^POST \/rpc$/), 'daemon');
      // The scheduler checks the new alarm's wake at the router's internal route, which asks the daemon: the same trace.
      calledBy(served('router', /^POST \/internal\/wake$/), 'scheduler');
      calledBy(served('daemon', /^POST \/wake$/), 'router');

      // The rail: a span per stage and per step, a tool call span per tool, a model call span per LLM call.
      for (const name of ['rail compile', 'rail plan', 'rail walk', 'rail step tool', 'execute_tool alarms.set', 'execute_tool payments.balance'])
        assert.ok(
          spans.some((span) => span.service === 'daemon' && span.name === name),
          `a daemon span ${name} in ${trace}`,
        );
      const tool = spans.find((span) => span.name === 'execute_tool alarms.set');
      assert.deepEqual([tool?.attributes['gen_ai.tool.name'], parentOf(tool as ReceivedSpan)?.name], ['alarms.set', 'rail step tool']);
      const llm = spans.filter((span) => span.service === 'daemon' && span.name.startsWith('chat '));
      assert.ok(llm.length >= 3, `compile, plan and answer are model calls: ${trace}`);
      for (const call of llm) {
        assert.equal(call.attributes['gen_ai.operation.name'], 'chat');
        assert.equal(typeof call.attributes['gen_ai.request.model'], 'string');
        assert.ok(Number(call.attributes['gen_ai.usage.input_tokens']) > 0, `tokens on ${call.name}`);
      }
      // The gateway's own model call span carries tokens and cost, and is the client span of its upstream call (GenAI's
      // inference span, with the server it asked): the scripted model saw it as its parent, so the trace reaches the upstream.
      const metered = spans.find((span) => span.service === 'gateway' && span.name.startsWith('chat ') && parentOf(span) === completion);
      assert.ok(metered, `the gateway's model call under its request: ${trace}`);
      assert.deepEqual(
        [metered.kind, metered.attributes['server.address'], metered.attributes['http.response.status_code']],
        [spanKinds.client, '127.0.0.1', 200],
      );
      assert.ok(Number(metered.attributes['gen_ai.usage.output_tokens']) > 0);
      assert.match(String(metered.attributes['platform.cost_credit']), /^\d+\.\d+$/);
      assert.ok(
        model.received.some((request) => String(request.headers.traceparent ?? '') === `00-${metered.traceId}-${metered.spanId}-01`),
        `the upstream model got the trace, under the gateway's model call: ${trace}`,
      );
      assert.deepEqual(receiver.refused(), []);
    });
  });
