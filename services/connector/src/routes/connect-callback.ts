import type { ServiceApp } from '@platform/kit/http/create-app';
import { nonJsonResponse } from '@platform/kit/wire-schemas';
import type { Logger } from 'pino';
import { type CallbackPage, callbackPageHeaders, pages, renderCallbackPage } from '../oauth/callback-page.ts';
import type { CallbackQuery } from '../oauth/connect-flow.ts';
import { callbackPath } from '../oauth/settings.ts';
import type { RouteDeps } from './route-deps.ts';

/** A query member as one string: absent, repeated or not text counts as absent. */
function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function registerConnectCallback(app: ServiceApp, deps: Pick<RouteDeps, 'connectFlow'> & { logger: Logger }): void {
  // Where the provider sends the user's browser back (`state` and `code`, or `error`). Public: a browser carries no
  // bearer; the single-use state is the proof. No query schema: every outcome, malformed ones too, is a page.
  app.get(callbackPath, {
    // Fastify's request log carries the URL, and this URL carries the authorization code and the state: no request
    // log here; the handler logs the outcome without them.
    logLevel: 'silent',
    schema: {
      description: 'Where the provider sends the browser back; every outcome is a page for the person.',
      response: {
        200: nonJsonResponse('text/html', 'Connected: the page says so and may be closed'),
        '4xx': nonJsonResponse('text/html', 'The link was stale, reused, refused by the person or malformed: the page says which'),
        '5xx': nonJsonResponse('text/html', 'The provider or the vault failed: the page says to try again'),
      },
    },
    handler: async (request, reply) => {
      const raw = request.query as Record<string, unknown>;
      const query: CallbackQuery = {};
      for (const name of ['state', 'code', 'error'] as const) {
        const value = single(raw[name]);
        if (value !== undefined) query[name] = value;
      }
      let page: CallbackPage;
      try {
        page = await deps.connectFlow.complete(query);
      } catch (error) {
        // A vault or database failure: the browser gets a page, the log gets the error (it names no secret).
        deps.logger.error({ err: error }, 'connect callback failed');
        page = pages.failed();
      }
      deps.logger.info({ status: page.status, outcome: page.title }, 'connect callback');
      return reply.code(page.status).headers(callbackPageHeaders).send(renderCallbackPage(page));
    },
  });
}
