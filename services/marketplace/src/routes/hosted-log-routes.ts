import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { lastEventIdHeaders, openSseSink, type SseSink, sseFrame, sseHeartbeat, ssePreamble } from '@platform/kit/http/sse';
import { nonJsonResponse } from '@platform/kit/wire-schemas';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type LogLine, queryLogLines } from '../hosting/hosting.repository.ts';
import { ownedListing } from '../listings/owned-listing.ts';
import { LogLineView } from './hosted-responses.ts';
import { HostedParams } from './hosted-routes.ts';
import { answers } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const levels = ['debug', 'info', 'warn', 'error'] as const;
const heartbeatMs = 15_000;
/** What a slow follower may leave unread before its stream is ended. */
const maxBufferedBytes = 1024 * 1024;

const LogQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Lines at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Lines before this time' })),
    level: Type.Optional(
      Type.Union(
        levels.map((level) => Type.Literal(level)),
        { description: 'This level and the ones above it (debug < info < warn < error)' },
      ),
    ),
    deployment_id: Type.Optional(Type.String({ format: 'uuid', description: 'One deployment’s lines' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'The newest lines up to this many (default 100)' })),
    follow: Type.Optional(Type.Boolean({ description: 'Stream the lines, then every new one, as server-sent events' })),
    last_event_id: Type.Optional(
      Type.String({ maxLength: 20, pattern: '^[0-9]+$', description: 'With follow: resume after this line (Last-Event-ID says the same)' }),
    ),
  },
  { additionalProperties: false },
);

const lineView = (line: LogLine) => ({
  id: String(line.id),
  at: line.at.toISOString(),
  level: line.level,
  deployment_id: line.deployment_id,
  invocation_id: line.invocation_id,
  message: line.message,
});

/**
 * `GET /v1/services/{id}/logs` (owner): what the listing's Workers printed and every uncaught exception, each line
 * with its time, level, deployment and invocation, filtered by `since`, `until`, `level`, `deployment_id`, the
 * newest `limit` oldest first; `?follow=true` sends them and then every new line as server-sent events (`log`).
 */
export function registerHostedLogRoutes(app: ServiceApp, deps: RouteDeps): void {
  const open = new Set<SseSink>();
  app.addHook('preClose', async () => {
    for (const sink of open) sink.end();
  });
  const developerOf = new WeakMap<FastifyRequest, string>();
  app.get('/v1/services/:id/logs', {
    preValidation: async (request) => {
      developerOf.set(request, (await deps.developers.authenticate(request)).address);
    },
    schema: {
      description: 'The Workers’ log lines (owner), or with follow=true an SSE stream of them (event `log`).',
      params: HostedParams,
      querystring: LogQuery,
      headers: lastEventIdHeaders,
      response: {
        200: answers(Type.Object({ lines: Type.Array(LogLineView) })),
        '2XX': nonJsonResponse('text/event-stream', 'With follow=true (answered 200): one `log` event per line, its id the line’s'),
      },
    },
    handler: async (request, reply) => {
      const listing = await ownedListing(deps.db, request.params.id, developerOf.get(request) as string);
      const query = request.query;
      const since = query.since === undefined ? undefined : new Date(query.since);
      const until = query.until === undefined ? undefined : new Date(query.until);
      const minimum = levels.indexOf(query.level ?? 'debug');
      const wanted = levels.slice(minimum);
      const filter = { listingId: listing.id, since, until, levels: minimum > 0 ? wanted : undefined, deploymentId: query.deployment_id };
      const resumeText = query.last_event_id ?? request.headers['last-event-id'];
      if (typeof resumeText === 'string' && !/^[0-9]{1,19}$/.test(resumeText))
        throw new ServiceError('invalid_request', 'Last-Event-ID must be a line id', { details: { field: 'last-event-id' } });
      if (!query.follow) {
        const lines = await queryLogLines(deps.db, { ...filter, limit: query.limit ?? 100 });
        return { ok: true as const, data: { lines: lines.map(lineView) } };
      }
      const matches = (line: LogLine) =>
        (since === undefined || line.at >= since) &&
        (until === undefined || line.at < until) &&
        wanted.includes(line.level as (typeof levels)[number]) &&
        (query.deployment_id === undefined || line.deployment_id === query.deployment_id.toLowerCase());
      // Lines written while the first page is read are held, then sent after it unless already in it.
      const held: LogLine[] = [];
      let sink: SseSink | undefined;
      let last = 0n;
      const send = (line: LogLine) => {
        if (!sink || line.id <= last || !matches(line)) return;
        last = line.id;
        sink.write(sseFrame({ id: line.id, event: 'log', data: lineView(line) }));
        // A reader that falls this far behind is let go rather than buffered for: it resumes with Last-Event-ID.
        if (sink.writableLength > maxBufferedBytes) sink.end();
      };
      const unfollow = deps.hosting.logs.follow(listing.id, (line) => (sink ? send(line) : held.push(line)));
      try {
        const first =
          typeof resumeText === 'string'
            ? await queryLogLines(deps.db, { ...filter, afterId: BigInt(resumeText), limit: 1000 })
            : await queryLogLines(deps.db, { ...filter, limit: query.limit ?? 100 });
        if (typeof resumeText === 'string') last = BigInt(resumeText);
        sink = openSseSink(reply);
        open.add(sink);
        sink.write(ssePreamble);
        for (const line of first) send(line);
        for (const line of held) send(line);
      } catch (error) {
        unfollow();
        throw error;
      }
      const heartbeat = setInterval(() => sink?.write(sseHeartbeat), heartbeatMs);
      heartbeat.unref();
      sink.once('close', () => {
        clearInterval(heartbeat);
        unfollow();
        if (sink) open.delete(sink);
      });
    },
  });
}
