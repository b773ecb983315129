import type { FastifyInstance } from 'fastify';
import { GatewayError, sendGatewayError } from './openai-errors.ts';

const disabledError = new GatewayError(
  503,
  'service_unavailable',
  'gateway_disabled',
  'the gateway is switched off (PLATFORM_GATEWAY_DISABLED=true) until restart',
  {
    noRetry: true,
  },
);

/**
 * PLATFORM_GATEWAY_DISABLED=true: every path, /healthz and unknown paths included, answers 503 before anything else
 * runs (no auth, no body read, nothing forwarded). Registered first, on the root instance.
 */
export function installKillSwitch(app: FastifyInstance, disabled: boolean): void {
  if (!disabled) return;
  app.log.warn('PLATFORM_GATEWAY_DISABLED=true: every request gets 503 until restart');
  app.addHook('onRequest', async (_request, reply) => {
    // Answered here: returning the reply from an async hook ends the request without running the route. Sent as
    // text, since it answers every route whatever its response schemas declare (/healthz's own 503 included).
    return sendGatewayError(reply, disabledError, { asText: true });
  });
}
