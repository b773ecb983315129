import { createHash } from 'node:crypto';
import type { KubernetesSettings } from '../config.ts';

/** The label every object of a user's environment carries, with the user's id (a UUID) as its value where it fits. */
export const userLabel = 'platform.dev/user';
export const componentLabels = {
  'app.kubernetes.io/name': 'platform',
  'app.kubernetes.io/component': 'daemon',
  'app.kubernetes.io/managed-by': 'platform-router',
};
/** Where each daemon's claim is mounted: its DATA_DIR, the same path as on Fly. */
export const dataPath = '/data';

/**
 * The name of a user's StatefulSet, claim and Secret: `daemon-<user id>` for an id that is a DNS label already (the
 * router's ids are UUIDs), else `daemon-` and a digest of it, so any id gives a valid name of at most 63 characters
 * with room for the pod's `-0` and the revision hash Kubernetes appends in a label.
 */
export function environmentName(userId: string): string {
  const lower = userId.toLowerCase();
  if (/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/.test(lower) && lower === userId) return `daemon-${lower}`;
  return `daemon-${createHash('sha256').update(userId).digest('hex').slice(0, 32)}`;
}

function labelsOf(settings: KubernetesSettings, userId: string, name: string): Record<string, string> {
  const value = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(userId) ? userId : name.slice('daemon-'.length);
  return { ...settings.podLabels, ...componentLabels, [userLabel]: value };
}

/** The user's own secrets (the daemon's bearer and owner tokens), kept out of the StatefulSet's spec. */
export function secretFor(settings: KubernetesSettings, userId: string, secrets: Record<string, string>) {
  const name = environmentName(userId);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, labels: labelsOf(settings, userId, name), annotations: { 'platform.dev/user-id': userId } },
    type: 'Opaque',
    stringData: secrets,
  };
}

export function claimFor(settings: KubernetesSettings, userId: string) {
  const name = environmentName(userId);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, labels: labelsOf(settings, userId, name), annotations: { 'platform.dev/user-id': userId } },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: settings.volumeSize } },
      ...(settings.storageClass === undefined ? {} : { storageClassName: settings.storageClass }),
    },
  };
}

/**
 * A StatefulSet of at most one pod (created at zero: the first request starts it). A StatefulSet rather than a bare
 * pod or a Deployment: Kubernetes recreates its pod after a node is lost, and never runs two pods of it at once, so two
 * daemons never write one journal. The image's default command is the daemon (its bundle); it runs as the image's
 * non-root user with a read-only root filesystem, no service account token and no privilege to gain.
 */
export function statefulSetFor(settings: KubernetesSettings, userId: string, daemonPort: number) {
  const name = environmentName(userId);
  const labels = labelsOf(settings, userId, name);
  const selector = { [userLabel]: labels[userLabel] as string, 'app.kubernetes.io/component': 'daemon' };
  const env = { ...settings.daemonEnv, DAEMON_USER_ID: userId, DATA_DIR: dataPath, HOST: '::', PORT: String(daemonPort) };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, labels, annotations: { 'platform.dev/user-id': userId } },
    spec: {
      replicas: 0,
      serviceName: name,
      selector: { matchLabels: selector },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'daemon',
              image: settings.image,
              imagePullPolicy: settings.imagePullPolicy,
              args: ['daemon'],
              ports: [{ name: 'http', containerPort: daemonPort }],
              env: Object.entries(env).map(([key, value]) => ({ name: key, value })),
              envFrom: [{ secretRef: { name } }],
              volumeMounts: [
                { name: 'data', mountPath: dataPath },
                { name: 'tmp', mountPath: '/tmp' },
              ],
              resources: { requests: { cpu: settings.cpu, memory: settings.memory }, limits: { memory: settings.memory } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: name } },
            { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
          ],
        },
      },
    },
  };
}
