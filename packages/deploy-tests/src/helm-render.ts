import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as renderGoTemplate } from '@evertdespiegeleer/go-template';
import { parse, parseAllDocuments } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects are checked against their schemas, not typed here.
export type KubeObject = Record<string, any>;

/** Values merged as Helm merges `--set`/`-f` over values.yaml: maps key by key, anything else replaced. */
function merge(base: KubeObject, over: KubeObject): KubeObject {
  const merged: KubeObject = { ...base };
  for (const [key, value] of Object.entries(over))
    merged[key] = value !== null && typeof value === 'object' && !Array.isArray(value) && typeof base[key] === 'object' ? merge(base[key], value) : value;
  return merged;
}

/**
 * Renders a chart as `helm template <release> <chart> --namespace <namespace>` does: each template under templates/
 * (not NOTES.txt, not `_` partials) through Go's own text/template (compiled to WebAssembly: the engine Helm runs),
 * with `.Values`, `.Release` and `.Chart`, then split into its YAML documents. The chart uses the template built-ins
 * only (no sprig, no `include`), so this is the whole of what Helm would do with it.
 */
export async function renderChart(chartDir: string, options: { release: string; namespace: string; values?: KubeObject }): Promise<KubeObject[]> {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as KubeObject;
  const values = merge(parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as KubeObject, options.values ?? {});
  const data = {
    Values: values,
    Release: { Name: options.release, Namespace: options.namespace, Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1 },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const objects: KubeObject[] = [];
  const templates = join(chartDir, 'templates');
  for (const file of readdirSync(templates).sort()) {
    if (!file.endsWith('.yaml') || file.startsWith('_')) continue;
    let text: string;
    try {
      text = await renderGoTemplate(readFileSync(join(templates, file), 'utf8'), data);
    } catch (error) {
      throw new Error(`templates/${file}: ${(error as Error).message}`);
    }
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) throw new Error(`templates/${file}: ${document.errors[0]?.message}\n${text}`);
      const object = document.toJS() as KubeObject | null;
      if (object !== null) objects.push({ ...object, metadata: { namespace: options.namespace, ...object.metadata } });
    }
  }
  return objects;
}

/**
 * Checks an object against Kubernetes' OpenAPI schema of its kind (kubernetes-models; the Prometheus Operator's from
 * @kubernetes-models/prometheus-operator); throws naming what is wrong.
 */
export async function validateObject(object: KubeObject): Promise<void> {
  const [group, version] = String(object.apiVersion).includes('/') ? String(object.apiVersion).split('/') : [undefined, object.apiVersion];
  // The Prometheus Operator's kinds (a ServiceMonitor) from its own models, generated from its CRDs.
  const models = group === 'monitoring.coreos.com' ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models';
  const path = `${models}/${group === undefined ? '' : `${group}/`}${version}/${object.kind}`;
  const module = (await import(path)) as Record<string, new (data: KubeObject) => { validate(): void }>;
  const Model = module[object.kind];
  if (Model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${object.kind} ${object.metadata?.name}: ${(error as Error).message}`);
  }
}

/** Whether a label selector's matchLabels all hold on `labels`. */
export function selects(selector: KubeObject | undefined, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

/**
 * Whether NetworkPolicies let a peer reach a pod on a port, as a cluster enforcing them decides: a pod no policy
 * selects takes anything; a selected pod takes only what some policy's ingress rule allows (peer and port).
 */
export function allowed(
  policies: readonly KubeObject[],
  target: { namespace: string; labels: Readonly<Record<string, string>> },
  peer: { namespace: string; namespaceLabels: Readonly<Record<string, string>>; labels: Readonly<Record<string, string>> },
  port: number,
): boolean {
  const applying = policies.filter((policy) => policy.metadata.namespace === target.namespace && selects(policy.spec.podSelector, target.labels));
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (policy.spec.ingress ?? []).some((rule: KubeObject) => {
      const portOk = rule.ports === undefined || rule.ports.some((entry: KubeObject) => entry.port === port);
      const peerOk =
        rule.from === undefined ||
        rule.from.some((from: KubeObject) =>
          from.namespaceSelector !== undefined
            ? selects(from.namespaceSelector, peer.namespaceLabels) && (from.podSelector === undefined || selects(from.podSelector, peer.labels))
            : peer.namespace === target.namespace && selects(from.podSelector, peer.labels),
        );
      return portOk && peerOk;
    }),
  );
}
