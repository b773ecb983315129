import type { HostedArtifactTable, HostedDeploymentTable, StoredBinding } from '../db/schema.ts';

/** Bindings as anyone is shown them: names and kinds, never a value of a secret. */
export const bindingsView = (bindings: StoredBinding[]) =>
  bindings.map((binding) =>
    binding.type === 'secret_text' ? { type: binding.type, name: binding.name } : { type: binding.type, name: binding.name, text: binding.text },
  );

export function artifactView(artifact: HostedArtifactTable) {
  return {
    id: artifact.id,
    service_id: artifact.listing_id,
    main_module: artifact.main_module,
    compatibility_date: artifact.compatibility_date,
    egress_allowlist: artifact.egress_allowlist,
    bindings: bindingsView(artifact.bindings),
    modules: artifact.modules.map((module) => ({
      name: module.name,
      type: module.type,
      size_bytes: module.type === 'wasm' ? Buffer.from(module.content, 'base64').length : Buffer.byteLength(module.content),
    })),
    size_bytes: artifact.size_bytes,
    created_at: artifact.created_at.toISOString(),
  };
}

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

type PhaseState = 'pending' | 'in_progress' | 'succeeded' | 'failed';

/** One phase: its state and times, from the deployment's columns. */
function phase(deployment: Omit<HostedDeploymentTable, 'bundle'>, name: 'build' | 'deploy' | 'running', started: Date | null, finished: Date | null) {
  const order = ['build', 'deploy', 'running'];
  let state: PhaseState;
  if (deployment.failed_phase === name) state = 'failed';
  else if (finished !== null) state = 'succeeded';
  else if (started !== null && deployment.status !== 'failed') state = 'in_progress';
  else state = 'pending';
  // A phase after the failed one never started.
  if (deployment.failed_phase !== null && order.indexOf(name) > order.indexOf(deployment.failed_phase)) state = 'pending';
  return {
    name,
    state,
    started_at: iso(started),
    finished_at: iso(state === 'failed' ? deployment.stopped_at : finished),
    duration_ms:
      started !== null && (finished ?? (state === 'failed' ? deployment.stopped_at : null)) !== null
        ? ((finished ?? deployment.stopped_at) as Date).getTime() - started.getTime()
        : null,
  };
}

export function deploymentView(deployment: Omit<HostedDeploymentTable, 'bundle'>, currentId: string | null | undefined) {
  return {
    id: deployment.id,
    service_id: deployment.listing_id,
    artifact_id: deployment.artifact_id,
    runner: deployment.runner,
    status: deployment.status,
    current: deployment.id === currentId,
    failed_phase: deployment.failed_phase,
    failure: deployment.failure,
    bindings: bindingsView(deployment.bindings),
    phases: [
      phase(deployment, 'build', deployment.build_started_at, deployment.build_finished_at),
      phase(deployment, 'deploy', deployment.deploy_started_at, deployment.deploy_finished_at),
      phase(deployment, 'running', deployment.deploy_finished_at, deployment.running_at),
    ],
    rollback_of: deployment.rollback_of,
    created_at: deployment.created_at.toISOString(),
    running_at: iso(deployment.running_at),
    stopped_at: iso(deployment.stopped_at),
  };
}
