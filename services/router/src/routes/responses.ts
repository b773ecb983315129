import { FailureSchema, okSchema } from '@platform/kit/envelope';
import { isoTime, nullable, untyped, uuid } from '@platform/kit/wire-schemas';
import { type TProperties, type TSchema, Type } from 'typebox';

/** The response schemas of the router's own routes (the proxy passes the daemon's answers through untouched). */

/** `{ok: true, data}`; typed `unknown` for the handler, which builds it from rows and provider answers. */
export const answers = <T extends TSchema>(data: T) => okSchema(untyped(data));

const status = Type.String({ description: '`ok`, or `unavailable` when the database does not answer' });

/** A health route's 200 and its 503 (the same data, with the error), as both listeners answer them. */
export function healthResponses(members: TProperties) {
  const data = Type.Object({ status, db: Type.Boolean(), ...members });
  return {
    200: answers(data),
    503: Type.Object({ ok: Type.Literal(false), data, error: FailureSchema.properties.error }, { description: 'The database does not answer' }),
  };
}

export const ColdStarts = Type.Object({
  count: Type.Integer(),
  failures: Type.Integer(),
  p50_ms: nullable(Type.Integer()),
  p99_ms: nullable(Type.Integer()),
  max_ms: nullable(Type.Integer()),
});

export const UserView = Type.Object({
  idp_user_id: uuid(),
  email: nullable(Type.String()),
  handle: nullable(Type.String()),
  region: Type.String(),
  state: Type.String({ description: 'provisioning, active, suspended or deleted' }),
  environment: Type.Object({
    provider: Type.String({ description: 'process, fly or kubernetes' }),
    id: nullable(Type.String()),
    address: nullable(Type.String({ description: 'Its stable address; null where it moves' })),
    volume: nullable(Type.String()),
    status: Type.String({ description: 'What the provider says: running, stopped, absent, ...' }),
  }),
  created_at: isoTime(),
  updated_at: isoTime(),
});

export const InviteView = Type.Object({
  code: Type.String(),
  uses: Type.Integer(),
  used: Type.Integer(),
  expires_at: nullable(isoTime()),
  note: nullable(Type.String()),
  created_at: isoTime(),
});

/** What the daemon's `/wake` answers (202 taken, 200 a repeat, or its refusal), passed on by `/internal/wake` as it came. */
export const daemonWakeAnswer = {
  description: 'The daemon’s answer as it came: 202 taken, 200 a repeat of the Idempotency-Key, or its refusal',
  content: {
    'application/json': {
      schema: Type.Union([okSchema(Type.Object({ accepted: Type.Boolean(), duplicate: Type.Boolean(), conversation_id: Type.String() })), FailureSchema]),
    },
  },
} as unknown as TSchema;

/** The proxy route: whatever the user's daemon (or the gateway under /gw) answers, passed through untouched. */
export const passedThrough = {
  description: 'The daemon’s answer (the gateway’s under /gw), status, headers and body as they came: JSON, SSE streams included',
  content: { '*/*': { schema: {} } },
} as unknown as TSchema;
