import { isoTime, nullable, oneOf, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';

/** The response schemas of hosted mode's routes (hosting/hosted-views.ts writes what they describe). */
const Binding = Type.Object({
  type: oneOf(['plain_text', 'secret_text']),
  name: Type.String(),
  text: Type.Optional(Type.String({ description: 'Plain-text bindings only: a secret’s value is never shown' })),
});

export const ArtifactView = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the upload: the same bytes are the same artifact' }),
  service_id: uuid(),
  main_module: Type.String(),
  compatibility_date: Type.String(),
  egress_allowlist: Type.Array(Type.String()),
  bindings: Type.Array(Binding),
  modules: Type.Array(Type.Object({ name: Type.String(), type: oneOf(['esm', 'wasm']), size_bytes: Type.Integer() })),
  size_bytes: Type.Integer(),
  created_at: isoTime(),
});

const Phase = Type.Object({
  name: oneOf(['build', 'deploy', 'running']),
  state: oneOf(['pending', 'in_progress', 'succeeded', 'failed']),
  started_at: nullable(isoTime()),
  finished_at: nullable(isoTime()),
  duration_ms: nullable(Type.Integer()),
});

export const DeploymentView = Type.Object({
  id: uuid(),
  service_id: uuid(),
  artifact_id: Type.String(),
  runner: oneOf(['workerd', 'cloudflare']),
  status: oneOf(['build', 'deploy', 'running', 'failed', 'stopped'], 'The phase it is in, running, failed, or stopped once replaced'),
  current: Type.Boolean({ description: 'Whether the listing’s calls go to it' }),
  failed_phase: Type.Unsafe<string | null>({ type: ['string', 'null'], enum: ['build', 'deploy', 'running', null], description: 'The phase it failed in' }),
  failure: nullable(Type.String({ description: 'Why it failed, for a person (a build error names the file and line)' })),
  bindings: Type.Array(Binding),
  phases: Type.Array(Phase),
  rollback_of: nullable(uuid('The earlier deployment this one runs again')),
  created_at: isoTime(),
  running_at: nullable(isoTime()),
  stopped_at: nullable(isoTime()),
});

export const LogLineView = Type.Object({
  id: Type.String({ description: 'Position in the listing’s log (resume a follow after it with Last-Event-ID)' }),
  at: isoTime(),
  level: oneOf(['debug', 'info', 'warn', 'error']),
  deployment_id: uuid(),
  invocation_id: nullable(Type.String({ description: 'The call that printed it; null for lines printed while the modules loaded' })),
  message: Type.String(),
});
