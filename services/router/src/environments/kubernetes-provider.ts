import { readFileSync } from 'node:fs';
import { ApiException, AppsV1Api, CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { KubernetesSettings } from '../config.ts';
import { claimFor, environmentName, secretFor, statefulSetFor } from './kubernetes-objects.ts';
import type { EnvironmentProvider, EnvironmentState, EnvironmentUser, ProvisionedEnvironment } from './provider.ts';

const serviceAccountNamespace = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
/** How long a start waits for the pod to run (image pull included) before it fails; a wake's own deadline is shorter. */
const startWaitMs = 180_000;
/** A running pod's address is read again at most this often, so a pod Kubernetes moved is found at its new IP. */
const addressTtlMs = 10_000;

const status = (error: unknown) => (error instanceof ApiException ? error.code : undefined);
function ignoring(...codes: number[]) {
  return (error: unknown) => {
    if (!codes.includes(status(error) ?? 0)) throw error;
  };
}

/** A URL's host for a pod IP, bracketed when it is IPv6. */
function addressOf(pod: V1Pod, port: number): string | undefined {
  const ip = pod.status?.podIP;
  if (ip === undefined || pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp !== undefined) return undefined;
  return `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
}

function kubeConfig(settings: KubernetesSettings): KubeConfig {
  const config = new KubeConfig();
  if (settings.apiUrl === undefined) {
    // KUBECONFIG, ~/.kube/config, or in the cluster the pod's service account (the chart's Role allows what follows).
    config.loadFromDefault();
    return config;
  }
  config.loadFromOptions({
    // The client refuses http: unless told to skip a TLS check it has nothing to do for (a local proxy, `kubectl proxy`).
    clusters: [
      {
        name: 'platform',
        server: settings.apiUrl,
        skipTLSVerify: settings.apiUrl.startsWith('http:'),
        ...(settings.apiCaFile === undefined ? {} : { caFile: settings.apiCaFile }),
      },
    ],
    users: [{ name: 'router', ...(settings.apiToken === undefined ? {} : { token: settings.apiToken }) }],
    contexts: [{ name: 'platform', cluster: 'platform', user: 'router' }],
    currentContext: 'platform',
  });
  return config;
}

/**
 * Kubernetes: per user a Secret (their daemon's bearer and owner tokens), a PersistentVolumeClaim (the daemon's
 * /data) and a StatefulSet of one pod created at zero replicas, through the official client. Start scales it to one and
 * waits for its pod to run; the address is the pod's IP on ROUTER_DAEMON_PORT (IPv6 or IPv4), read again every 10 s so
 * a pod the cluster moved is found; stop scales to zero (the daemon drains on SIGTERM); destroy deletes all three.
 * Every step is idempotent: a router that stopped half way through `ensure` finds what it made by name.
 */
export class KubernetesProvider implements EnvironmentProvider {
  readonly name = 'kubernetes';
  readonly #settings: KubernetesSettings;
  readonly #namespace: string;
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;
  readonly #secretsFor: (userId: string) => Record<string, string>;
  readonly #daemonPort: number;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #logger: Logger;
  readonly #closing = new AbortController();
  readonly #running = new Map<string, { address: string; readAt: number }>();

  constructor(
    settings: KubernetesSettings,
    options: { secretsFor: (userId: string) => Record<string, string>; daemonPort: number; clock: Clock; pollMs: number; logger: Logger },
  ) {
    const config = kubeConfig(settings);
    this.#settings = settings;
    this.#namespace = settings.namespace ?? inClusterNamespace();
    this.#apps = config.makeApiClient(AppsV1Api);
    this.#core = config.makeApiClient(CoreV1Api);
    this.#secretsFor = options.secretsFor;
    this.#daemonPort = options.daemonPort;
    this.#clock = options.clock;
    this.#pollMs = options.pollMs;
    this.#logger = options.logger;
  }

  async ensure(user: EnvironmentUser): Promise<ProvisionedEnvironment> {
    const namespace = this.#namespace;
    const secret = secretFor(this.#settings, user.id, this.#secretsFor(user.id));
    const name = secret.metadata.name;
    // The Secret is written again when it exists: its tokens follow the router's roots (a rotation reaches the daemon
    // at its next start).
    await this.#core.createNamespacedSecret({ namespace, body: secret }).catch(async (error) => {
      if (status(error) !== 409) throw error;
      await this.#core.replaceNamespacedSecret({ name, namespace, body: secret });
    });
    await this.#core.createNamespacedPersistentVolumeClaim({ namespace, body: claimFor(this.#settings, user.id) }).catch(ignoring(409));
    await this.#apps.createNamespacedStatefulSet({ namespace, body: statefulSetFor(this.#settings, user.id, this.#daemonPort) }).catch(ignoring(409));
    this.#logger.info({ user: user.id, namespace, name }, 'kubernetes environment ensured');
    return { environmentId: `${namespace}/${name}`, address: null, volume: name };
  }

  async start(user: EnvironmentUser): Promise<void> {
    const name = environmentName(user.id);
    const namespace = this.#namespace;
    const scale = await this.#apps.readNamespacedStatefulSetScale({ name, namespace });
    if (scale.spec?.replicas !== 1)
      await this.#apps.patchNamespacedStatefulSetScale({ name, namespace, body: [{ op: 'replace', path: '/spec/replicas', value: 1 }] });
    const deadline = this.#clock.now().getTime() + startWaitMs;
    for (;;) {
      const address = await this.#podAddress(name);
      if (address !== undefined) {
        this.#running.set(user.id, { address, readAt: this.#clock.now().getTime() });
        return;
      }
      if (this.#clock.now().getTime() >= deadline) throw new Error(`pod ${namespace}/${name}-0 did not run within ${startWaitMs / 1000} s`);
      await this.#clock.sleep(this.#pollMs, this.#closing.signal);
      if (this.#closing.signal.aborted) throw new Error('the router is stopping');
    }
  }

  async stop(user: EnvironmentUser): Promise<void> {
    this.#running.delete(user.id);
    const body = [{ op: 'replace', path: '/spec/replicas', value: 0 }];
    await this.#apps.patchNamespacedStatefulSetScale({ name: environmentName(user.id), namespace: this.#namespace, body }).catch(ignoring(404));
  }

  async destroy(user: EnvironmentUser): Promise<void> {
    this.#running.delete(user.id);
    const name = environmentName(user.id);
    const namespace = this.#namespace;
    // The pod goes with its StatefulSet (foreground: the set is gone once its pod is); the claim, kept while a pod
    // still mounts it (Kubernetes' protection), then the Secret.
    await this.#apps.deleteNamespacedStatefulSet({ name, namespace, propagationPolicy: 'Foreground' }).catch(ignoring(404));
    await this.#core.deleteNamespacedPersistentVolumeClaim({ name, namespace }).catch(ignoring(404));
    await this.#core.deleteNamespacedSecret({ name, namespace }).catch(ignoring(404));
  }

  async address(user: EnvironmentUser): Promise<string | undefined> {
    const known = this.#running.get(user.id);
    if (known === undefined) return undefined;
    const now = this.#clock.now().getTime();
    if (now - known.readAt < addressTtlMs) return known.address;
    const address = await this.#podAddress(environmentName(user.id)).catch(() => known.address);
    if (address === undefined) this.#running.delete(user.id);
    else this.#running.set(user.id, { address, readAt: now });
    return address;
  }

  async state(user: EnvironmentUser): Promise<EnvironmentState> {
    const name = environmentName(user.id);
    try {
      const set = await this.#apps.readNamespacedStatefulSet({ name, namespace: this.#namespace });
      if ((set.spec?.replicas ?? 0) === 0) return 'stopped';
    } catch (error) {
      if (status(error) === 404) return 'absent';
      throw error;
    }
    return (await this.#podAddress(name)) === undefined ? 'starting' : 'running';
  }

  running(): string[] {
    return [...this.#running.keys()];
  }

  async close(): Promise<void> {
    // The StatefulSets are the cluster's to keep; a restarted router finds each by name on the user's next request.
    this.#closing.abort();
  }

  async #podAddress(name: string): Promise<string | undefined> {
    try {
      return addressOf(await this.#core.readNamespacedPod({ name: `${name}-0`, namespace: this.#namespace }), this.#daemonPort);
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw error;
    }
  }
}

function inClusterNamespace(): string {
  try {
    return readFileSync(serviceAccountNamespace, 'utf8').trim();
  } catch {
    throw new Error(`K8S_NAMESPACE is not set and ${serviceAccountNamespace} cannot be read (not in a cluster): set K8S_NAMESPACE`);
  }
}
