import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { redactUrl } from '../tools/mcp-connection.ts';
import { answers, Health, Me, Tools } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/** GET /healthz (public: liveness and the SSE broker's numbers), GET /me and GET /tools (who this agent is, what it can use). */
export function registerHealthRoutes(app: ServiceApp, deps: RouteDeps): void {
  // Liveness, the walk in flight, and the live-event broker: subscribers, drops and buffer sizes. No bearer. `working`
  // (an intent walking or queued, or a wake's turn running) tells the router not to stop this daemon as idle.
  app.get('/healthz', {
    schema: { description: 'Liveness, the walk in flight and the live-event broker’s numbers (no bearer).', response: { 200: answers(Health) } },
    handler: async () => ({
      ok: true as const,
      data: {
        status: deps.runner.draining ? 'draining' : 'ok',
        version: deps.version,
        walking: deps.runner.walking !== undefined,
        busy: deps.runner.busy,
        working: deps.runner.busy || deps.wakes.inProgress > 0,
        intents: deps.book.count,
        broker: deps.broker.stats(),
      },
    }),
  });

  // The user this daemon serves, its DID and public key, its models and the services it is wired to. Never a secret.
  app.get('/me', {
    schema: { description: 'The user this daemon serves, its DID, models and the services it is wired to (never a secret).', response: { 200: answers(Me) } },
    handler: async () => {
      const { config, identity } = deps;
      const service = (link: { url: string } | undefined) => (link === undefined ? null : { url: redactUrl(link.url) });
      return {
        ok: true as const,
        data: {
          user_id: identity.userId,
          did: identity.did,
          public_key: identity.publicKeyHex,
          version: deps.version,
          models: {
            compiler: config.models.compiler,
            compiler_escalation: config.models.compilerEscalation,
            planner: config.models.planner,
            executor: config.models.executor,
          },
          services: {
            gateway: service(config.gateway),
            memory: service(config.memory),
            contracts: service(config.contracts),
            scheduler: service(config.scheduler),
            settlement: service(config.settlement),
            marketplace: service(config.marketplace),
            mcp_servers: deps.tools.providers
              .filter((provider) => !['alarms', 'payments', 'market', 'memory', 'contracts'].includes(provider.server))
              .map((provider) => ({ name: provider.server, ...provider.describe })),
          },
          settings: {
            gate_timeout_seconds: config.gateTimeoutMs / 1000,
            async_strategy: config.asyncStrategy,
            max_queued_intents: config.maxQueuedIntents,
            compile_confidence: config.compileConfidence,
            ungated_tools: config.ungatedTools,
          },
        },
      };
    },
  });

  // Every tool the agent can use now, with whether the daemon asks before running it; unreachable servers are named.
  app.get('/tools', {
    schema: { description: 'Every tool the agent can use now; unreachable servers are named.', response: { 200: answers(Tools) } },
    handler: async () => {
      const snapshot = await deps.tools.snapshot();
      if (snapshot.tools.size === 0 && snapshot.unavailable.length > 0)
        throw new ServiceError('unavailable', `no tool server answered: ${snapshot.unavailable.map((entry) => entry.server).join(', ')}`);
      return {
        ok: true as const,
        data: {
          tools: [...snapshot.tools.values()].map((tool) => ({
            name: tool.name,
            server: tool.server,
            description: tool.description,
            read_only: tool.readOnly,
            input_schema: tool.inputSchema,
          })),
          unavailable: snapshot.unavailable,
        },
      };
    },
  });
}
