import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';

// biome-ignore lint/suspicious/noExplicitAny: the stand-in keeps the API's objects as the JSON they are.
type KubeObject = Record<string, any>;
interface Pod {
  name: string;
  ip: string;
  phase: 'Pending' | 'Running';
  deleting: boolean;
  process: ChildProcess;
}

/** The schema each kind the router creates must meet (Kubernetes' OpenAPI, through kubernetes-models), as the API server checks. */
const models: Record<string, new (data: KubeObject) => { validate(): void }> = {
  secrets: Secret,
  persistentvolumeclaims: PersistentVolumeClaim,
  statefulsets: StatefulSet,
};
const kinds: Record<string, string> = { secrets: 'Secret', persistentvolumeclaims: 'PersistentVolumeClaim', statefulsets: 'StatefulSet' };

const statusOf = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });

/**
 * A local server speaking the routes and shapes of the Kubernetes API the router's `kubernetes` provider calls
 * (Secrets, PersistentVolumeClaims, StatefulSets and their scale, Pods), with the API server's answers (Status objects,
 * 404 NotFound, 409 AlreadyExists, 422 Invalid for an object outside the schema). Its controller runs a StatefulSet
 * scaled to one as a real daemon process: the pod's claim is a folder mounted as the daemon's /data, its env is the
 * container's env and its Secret's, and its pod IP is a loopback address: `::1` (IPv6) for the first pod running, since
 * IPv6 has only the one loopback address, and 127.0.0.N for each pod beside it. Scaling to zero SIGTERMs the daemon.
 */
export async function startKubernetesStandIn(options: { namespace: string; token: string; daemonEntry: string; nodeFlags: readonly string[]; ipv6: boolean }) {
  const stores = { secrets: new Map<string, KubeObject>(), persistentvolumeclaims: new Map<string, KubeObject>(), statefulsets: new Map<string, KubeObject>() };
  const pods = new Map<string, Pod>();
  const requests: { method: string; path: string; body: unknown }[] = [];
  const root = mkdtempSync(join(tmpdir(), 'kubernetes-stand-in-'));
  let nextIp = 20;
  let resourceVersion = 1;

  const podIp = () => (options.ipv6 && ![...pods.values()].some((pod) => pod.ip === '::1') ? '::1' : `127.0.0.${nextIp++}`);
  const claimDir = (name: string) => join(root, name);

  const runPod = (set: KubeObject, ip = podIp()) => {
    const name = `${set.metadata.name}-0`;
    const template = set.spec.template.spec;
    const container = template.containers[0];
    const env: Record<string, string> = {};
    for (const { name: key, value } of container.env ?? []) env[key] = value;
    for (const source of container.envFrom ?? []) Object.assign(env, stores.secrets.get(source.secretRef.name)?.stringData ?? {});
    const claim = template.volumes.find((volume: KubeObject) => volume.name === 'data')?.persistentVolumeClaim?.claimName;
    if (!stores.persistentvolumeclaims.has(claim)) throw new Error(`pod ${name} mounts a claim that does not exist: ${claim}`);
    const child = spawn(process.execPath, [...options.nodeFlags, options.daemonEntry], {
      env: { ...env, PATH: process.env.PATH ?? '', HOST: ip, DATA_DIR: claimDir(claim) },
      stdio: 'ignore',
    });
    const pod: Pod = { name, ip, phase: 'Pending', deleting: false, process: child };
    pods.set(name, pod);
    child.once('exit', () => {
      if (pods.get(name) === pod) pods.delete(name);
    });
    // The kubelet reports Running once the container started, before the daemon in it answers: the router probes.
    pod.phase = 'Running';
  };
  const stopPod = async (name: string) => {
    const pod = pods.get(name);
    if (pod === undefined) return;
    pod.deleting = true;
    if (pod.process.exitCode === null && pod.process.signalCode === null) {
      pod.process.kill('SIGTERM');
      await new Promise((resolve) => pod.process.once('exit', resolve));
    }
    pods.delete(name);
  };
  /** The StatefulSet controller: one pod while replicas is 1, none at 0. */
  const reconcile = async (set: KubeObject) => {
    const name = `${set.metadata.name}-0`;
    if (set.spec.replicas >= 1 && !pods.has(name)) runPod(set);
    if (set.spec.replicas === 0) await stopPod(name);
  };

  const podView = (pod: Pod) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: options.namespace, ...(pod.deleting ? { deletionTimestamp: new Date().toISOString() } : {}) },
    status: { phase: pod.phase, podIP: pod.ip, podIPs: [{ ip: pod.ip }] },
  });

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const url = new URL(request.url ?? '/', 'http://kubernetes');
    const method = request.method ?? '';
    requests.push({ method, path: url.pathname, body });
    const send = (code: number, value: unknown) => response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (request.headers.authorization !== `Bearer ${options.token}`) return send(401, statusOf(401, 'Unauthorized', 'Unauthorized'));
    const match = /^\/(?:api\/v1|apis\/apps\/v1)\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?(?:\/(scale))?$/.exec(url.pathname);
    if (!match) return send(404, statusOf(404, 'NotFound', `the server could not find the requested resource ${url.pathname}`));
    const [, namespace, resource = '', name, sub] = match;
    if (namespace !== options.namespace) return send(403, statusOf(403, 'Forbidden', `namespace ${namespace} is not the router's`));
    if (resource === 'pods') {
      const pod = pods.get(name ?? '');
      return method === 'GET' && pod ? send(200, podView(pod)) : send(404, statusOf(404, 'NotFound', `pods "${name}" not found`));
    }
    const store = (stores as Record<string, Map<string, KubeObject>>)[resource];
    if (store === undefined) return send(404, statusOf(404, 'NotFound', `no resource ${resource}`));
    const notFound = () => send(404, statusOf(404, 'NotFound', `${resource} "${name}" not found`));
    if (method === 'POST' && name === undefined) {
      try {
        new (models[resource] as (typeof models)[string])(body).validate();
      } catch (error) {
        return send(422, statusOf(422, 'Invalid', `${kinds[resource]} is invalid: ${(error as Error).message}`));
      }
      if (body.kind !== kinds[resource]) return send(400, statusOf(400, 'BadRequest', `kind ${body.kind} posted to ${resource}`));
      if (store.has(body.metadata.name)) return send(409, statusOf(409, 'AlreadyExists', `${resource} "${body.metadata.name}" already exists`));
      const created = {
        ...body,
        metadata: { ...body.metadata, namespace, uid: randomUUID(), resourceVersion: String(resourceVersion++), creationTimestamp: new Date().toISOString() },
      };
      store.set(created.metadata.name, created);
      if (resource === 'persistentvolumeclaims') mkdirSync(claimDir(created.metadata.name), { recursive: true });
      if (resource === 'statefulsets') await reconcile(created);
      return send(201, created);
    }
    const object = store.get(name ?? '');
    if (object === undefined) return notFound();
    if (sub === 'scale') {
      const scale = () => ({
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name, namespace },
        spec: { replicas: object.spec.replicas },
        status: { replicas: pods.has(`${name}-0`) ? 1 : 0 },
      });
      if (method === 'GET') return send(200, scale());
      if (method !== 'PATCH' || request.headers['content-type'] !== 'application/json-patch+json')
        return send(415, statusOf(415, 'UnsupportedMediaType', 'json-patch only'));
      for (const operation of body) {
        if (operation.op !== 'replace' || operation.path !== '/spec/replicas' || ![0, 1].includes(operation.value))
          return send(422, statusOf(422, 'Invalid', `unsupported patch ${JSON.stringify(operation)}`));
        object.spec.replicas = operation.value;
      }
      await reconcile(object);
      return send(200, scale());
    }
    if (method === 'GET') return send(200, object);
    if (method === 'PUT') {
      store.set(name as string, { ...body, metadata: { ...object.metadata, resourceVersion: String(resourceVersion++) } });
      return send(200, store.get(name as string));
    }
    if (method === 'DELETE') {
      if (resource === 'statefulsets') await stopPod(`${name}-0`);
      if (resource === 'persistentvolumeclaims') {
        if (
          [...stores.statefulsets.values()].some(
            (set) =>
              pods.has(`${set.metadata.name}-0`) &&
              set.spec.template.spec.volumes.some((volume: KubeObject) => volume.persistentVolumeClaim?.claimName === name),
          )
        )
          return send(409, statusOf(409, 'Conflict', `claim ${name} is still mounted`));
        rmSync(claimDir(name as string), { recursive: true, force: true });
      }
      store.delete(name as string);
      return send(200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name, kind: resource } });
    }
    return send(405, statusOf(405, 'MethodNotAllowed', `${method} is not allowed on ${resource}`));
  });
  const { port, close } = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}`,
    stores,
    pods,
    requests,
    /** Kubernetes moving the pod (its node lost): the daemon ends and its StatefulSet's pod runs again at a new IP. */
    async reschedule(setName: string) {
      await stopPod(`${setName}-0`);
      const set = stores.statefulsets.get(setName) as KubeObject;
      runPod(set, `127.0.0.${nextIp++}`);
    },
    async close() {
      for (const name of [...pods.keys()]) await stopPod(name);
      await close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
