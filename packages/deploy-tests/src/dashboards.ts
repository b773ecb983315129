import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Grafana dashboards of deploy/observability/dashboards/, one per area, written from the definitions below
 * (`npm run dashboards -w packages/deploy-tests`): panels are a title, PromQL and a unit, and the layout, datasource
 * and variables are the same for all. The test checks the files are what these definitions write, and that every
 * metric their PromQL names exists in the services' code.
 */
interface Panel {
  title: string;
  description?: string;
  /** PromQL, with `$__rate_interval` and the dashboard's variables; each target's legend after `|`. */
  targets: readonly string[];
  unit?: string;
  kind?: 'timeseries' | 'stat';
  /** Half the width (the default) or all of it. */
  wide?: boolean;
}

interface Dashboard {
  file: string;
  uid: string;
  title: string;
  description: string;
  /** The jobs the `job` variable offers (label_values of this metric); the panels filter on `job=~"$job"`. */
  jobsOf: string;
  rows: readonly { title: string; panels: readonly Panel[] }[];
}

const rate = (metric: string, by = 'job') => `sum by (${by}) (rate(${metric}[$__rate_interval]))`;
const quantile = (q: number, histogram: string, by: string, filter = 'job=~"$job"') =>
  `histogram_quantile(${q}, sum by (${by ? `${by}, ` : ''}le) (rate(${histogram}_bucket{${filter}}[$__rate_interval])))`;

const http: readonly Panel[] = [
  { title: 'Requests per second', targets: [`${rate('http_requests_total{job=~"$job"}')}|{{job}}`], unit: 'reqps' },
  {
    title: 'Share of 5xx',
    description: 'Answers the service failed (a caller’s mistake is a 4xx).',
    targets: [`${rate('http_requests_total{job=~"$job",status_class="5xx"}')} / ${rate('http_requests_total{job=~"$job"}')}|{{job}}`],
    unit: 'percentunit',
  },
  {
    title: 'Latency p99 by route',
    targets: [`${quantile(0.99, 'http_request_duration_seconds', 'job, route')}|{{job}} {{route}}`],
    unit: 's',
    wide: true,
  },
  { title: 'Requests in flight', targets: ['sum by (job) (http_requests_in_flight{job=~"$job"})|{{job}}'] },
  {
    title: 'Requests by status class',
    targets: [`${rate('http_requests_total{job=~"$job"}', 'job, status_class')}|{{job}} {{status_class}}`],
    unit: 'reqps',
  },
];

const processPanels: readonly Panel[] = [
  { title: 'CPU', targets: [`${rate('process_cpu_seconds_total{job=~"$job"}', 'job, instance')}|{{job}} {{instance}}`], unit: 'percentunit' },
  { title: 'Resident memory', targets: ['max by (job, instance) (process_resident_memory_bytes{job=~"$job"})|{{job}} {{instance}}'], unit: 'bytes' },
  { title: 'Event-loop lag p99', targets: ['max by (job, instance) (nodejs_eventloop_lag_p99_seconds{job=~"$job"})|{{job}} {{instance}}'], unit: 's' },
  {
    title: 'Time in GC',
    targets: [`${rate('nodejs_gc_duration_seconds_sum{job=~"$job"}', 'job, instance')}|{{job}} {{instance}}`],
    unit: 'percentunit',
  },
];

const database: readonly Panel[] = [
  { title: 'Query latency p99', targets: [`${quantile(0.99, 'db_query_duration_seconds', 'job')}|{{job}}`], unit: 's' },
  {
    title: 'Failed queries per second',
    targets: [`${rate('db_query_duration_seconds_count{job=~"$job",outcome="error"}')}|{{job}}`],
    unit: 'ops',
  },
  { title: 'Pool connections', targets: ['sum by (job, state) (db_pool_connections{job=~"$job"})|{{job}} {{state}}'] },
  {
    title: 'Callers waiting for a connection',
    description: 'Above zero for long: requests queue for the database (alert PlatformDatabasePoolSaturated).',
    targets: ['max by (job, instance) (db_pool_waiting{job=~"$job"})|{{job}} {{instance}}'],
  },
];

/** The HTTP and database rows every service's own dashboard ends with, filtered to its job. */
const serviceRows = [
  { title: 'HTTP', panels: http },
  { title: 'Database', panels: database },
];

export const dashboards: readonly Dashboard[] = [
  {
    file: 'platform-overview.json',
    uid: 'platform-overview',
    title: 'Platform / Overview',
    description: 'Every service: targets up, HTTP by route template and status class, the process, the database pool.',
    jobsOf: 'http_requests_total',
    rows: [
      {
        title: 'Targets',
        panels: [
          { title: 'Targets up', kind: 'stat', targets: ['sum by (job) (up{job=~"$job"})|{{job}}'], wide: true },
          { title: 'Firing alerts', kind: 'stat', targets: ['count by (alertname) (ALERTS{alertstate="firing"})|{{alertname}}'], wide: true },
        ],
      },
      { title: 'HTTP', panels: http },
      { title: 'Process', panels: processPanels },
      { title: 'Database', panels: database },
    ],
  },
  {
    file: 'scheduler.json',
    uid: 'platform-scheduler',
    title: 'Platform / Scheduler',
    description: 'Alarms due, how late they fire, fires by outcome, wakes that fail.',
    jobsOf: 'scheduler_fires_total',
    rows: [
      {
        title: 'Alarms',
        panels: [
          {
            title: 'Due and not claimed',
            targets: ['sum(scheduler_alarms_due{job=~"$job"})|due'],
            description: 'A growing backlog: dispatchers do not keep up.',
          },
          {
            title: 'Fire lateness',
            description: 'Fire time less due time; alert SchedulerFiresLate at p99 > 1 s.',
            targets: [`${quantile(0.5, 'scheduler_fire_lateness_seconds', '')}|p50`, `${quantile(0.99, 'scheduler_fire_lateness_seconds', '')}|p99`],
            unit: 's',
          },
          { title: 'Fires by outcome', targets: [`${rate('scheduler_fires_total{job=~"$job"}', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Wake failures by reason', targets: [`${rate('scheduler_wake_failures_total{job=~"$job"}', 'reason')}|{{reason}}`], unit: 'ops' },
        ],
      },
      ...serviceRows,
    ],
  },
  {
    file: 'settlement.json',
    uid: 'platform-settlement',
    title: 'Platform / Settlement',
    description: 'Pays and holds, group commits, the reserve, anchors, deposits and withdrawals, the sequencer.',
    jobsOf: 'settlement_pays_total',
    rows: [
      {
        title: 'Reserve and sequencer',
        panels: [
          { title: 'Fully reserved', kind: 'stat', targets: ['min(settlement_fully_reserved{job=~"$job"})|fully reserved'] },
          { title: 'Role by instance', kind: 'stat', targets: ['max by (instance, role) (settlement_role{job=~"$job"})|{{instance}} {{role}}'] },
          {
            title: 'Supply and vault reserve',
            description: 'Whole units. The reserve must never fall below the supply (alert SettlementNotFullyReserved).',
            targets: ['max(settlement_supply{job=~"$job"})|supply', 'max(settlement_vault_reserve{job=~"$job"})|vault reserve'],
            wide: true,
          },
        ],
      },
      {
        title: 'Movements',
        panels: [
          { title: 'Pays by outcome', targets: [`${rate('settlement_pays_total{job=~"$job"}', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Holds by outcome', targets: [`${rate('settlement_holds_total{job=~"$job"}', 'outcome')}|{{outcome}}`], unit: 'ops' },
          {
            title: 'Group size',
            targets: [`${quantile(0.5, 'settlement_group_size', '')}|p50`, `${quantile(0.99, 'settlement_group_size', '')}|p99`],
          },
          {
            title: 'Group commit latency',
            targets: [`${quantile(0.5, 'settlement_group_commit_seconds', '')}|p50`, `${quantile(0.99, 'settlement_group_commit_seconds', '')}|p99`],
            unit: 's',
          },
        ],
      },
      {
        title: 'Chain',
        panels: [
          { title: 'Anchor lag', targets: ['max(settlement_anchor_lag_seconds{job=~"$job"})|seconds'], unit: 's' },
          { title: 'Anchor lag in blocks', targets: ['max(settlement_anchor_lag_blocks{job=~"$job"})|blocks'] },
          { title: 'Deposits awaiting confirmations', targets: ['max(settlement_deposits_awaiting_confirmations{job=~"$job"})|deposits'] },
          { title: 'Withdrawals pending', targets: ['max(settlement_withdrawals_pending{job=~"$job"})|withdrawals'] },
        ],
      },
      ...serviceRows,
    ],
  },
  {
    file: 'gateway.json',
    uid: 'platform-gateway',
    title: 'Platform / Gateway',
    description: 'Calls by model, slot and outcome, credits spent, budget refusals, the upstream’s latency and errors, leases.',
    jobsOf: 'gateway_calls_total',
    rows: [
      {
        title: 'Calls and spend',
        panels: [
          {
            title: 'Calls by model and outcome',
            targets: [`${rate('gateway_calls_total{job=~"$job"}', 'model, outcome')}|{{model}} {{outcome}}`],
            unit: 'ops',
          },
          { title: 'Calls by slot', targets: [`${rate('gateway_calls_total{job=~"$job"}', 'slot')}|{{slot}}`], unit: 'ops' },
          {
            title: 'Credits spent per hour by model',
            targets: [`sum by (model) (increase(gateway_credits_spent_total{job=~"$job"}[1h]))|{{model}}`],
          },
          { title: 'Budget refusals by reason', targets: [`${rate('gateway_budget_refusals_total{job=~"$job"}', 'reason')}|{{reason}}`], unit: 'ops' },
        ],
      },
      {
        title: 'Upstream',
        panels: [
          {
            title: 'Upstream latency by model',
            targets: [
              `${quantile(0.5, 'gateway_upstream_duration_seconds', 'model')}|{{model}} p50`,
              `${quantile(0.99, 'gateway_upstream_duration_seconds', 'model')}|{{model}} p99`,
            ],
            unit: 's',
          },
          {
            title: 'Upstream errors by model and kind',
            description: 'Alert GatewayUpstreamErrors when above 5 % of a model’s upstream calls.',
            targets: [`${rate('gateway_upstream_errors_total{job=~"$job"}', 'model, kind')}|{{model}} {{kind}}`],
            unit: 'ops',
          },
          { title: 'Leases held', targets: ['sum(gateway_leases_held{job=~"$job"})|leases'] },
        ],
      },
      ...serviceRows,
    ],
  },
  {
    file: 'router-daemon.json',
    uid: 'platform-router-daemon',
    title: 'Platform / Router and daemons',
    description: 'Wakes, cold starts, waiters, environments, proxy latency; the daemons’ intents, gates, SSE and journal.',
    jobsOf: 'router_wakes_total',
    rows: [
      {
        title: 'Router',
        panels: [
          { title: 'Wakes by outcome', targets: [`${rate('router_wakes_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Wake duration p99', targets: [`${quantile(0.99, 'router_wake_duration_seconds', '', 'job=~"router"')}|p99`], unit: 's' },
          { title: 'Cold starts per second', targets: ['sum(rate(router_cold_starts_total[$__rate_interval]))|cold starts'], unit: 'ops' },
          { title: 'Requests waiting for a daemon', targets: ['sum(router_waiters)|waiters'] },
          { title: 'Environments by state', targets: ['sum by (state) (router_environments)|{{state}}'] },
          {
            title: 'Proxy latency p99 by target',
            targets: [`${quantile(0.99, 'router_proxy_duration_seconds', 'target', 'job=~"router"')}|{{target}}`],
            unit: 's',
          },
          { title: 'Proxy failures by target', targets: [`${rate('router_proxy_failures_total', 'target')}|{{target}}`], unit: 'ops' },
          { title: 'Scheduler wakes by answer', targets: [`${rate('router_wake_deliveries_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
        ],
      },
      {
        title: 'Daemons',
        panels: [
          { title: 'Intents by state', targets: ['sum by (state) (daemon_intents)|{{state}}'] },
          { title: 'Gates pending', targets: ['sum(daemon_gates_pending)|gates'] },
          { title: 'SSE subscribers', targets: ['sum(daemon_sse_subscribers)|subscribers'] },
          { title: 'SSE events dropped per second', targets: ['sum(rate(daemon_sse_dropped_events_total[$__rate_interval]))|dropped'], unit: 'ops' },
          { title: 'Journal appends per second', targets: ['sum(rate(daemon_journal_appends_total[$__rate_interval]))|appends'], unit: 'ops' },
        ],
      },
      ...serviceRows,
    ],
  },
  {
    file: 'marketplace.json',
    uid: 'platform-marketplace',
    title: 'Platform / Marketplace',
    description: 'Invocations by outcome and rail, holds open, provider latency, hosted deployments.',
    jobsOf: 'marketplace_invocations_total',
    rows: [
      {
        title: 'Marketplace',
        panels: [
          {
            title: 'Invocations by outcome and rail',
            targets: [`${rate('marketplace_invocations_total{job=~"$job"}', 'outcome, rail')}|{{rail}} {{outcome}}`],
            unit: 'ops',
          },
          { title: 'Holds open', targets: ['sum(marketplace_holds_open{job=~"$job"})|holds'] },
          {
            title: 'Provider latency p99 by hosting',
            targets: [`${quantile(0.99, 'marketplace_provider_duration_seconds', 'hosting')}|{{hosting}}`],
            unit: 's',
          },
          { title: 'Deployments by phase', targets: ['sum by (phase) (marketplace_deployments{job=~"$job"})|{{phase}}'] },
        ],
      },
      ...serviceRows,
    ],
  },
  {
    file: 'connector-memory-contracts.json',
    uid: 'platform-tools',
    title: 'Platform / Connector, memory, contracts',
    description: 'The agent’s tools: connector tool calls and refreshes, memory recall and search, contract compiles, tests and deploys.',
    jobsOf: 'http_requests_total',
    rows: [
      {
        title: 'Connector',
        panels: [
          { title: 'Tool calls by tool and outcome', targets: [`${rate('connector_tool_calls_total', 'tool, outcome')}|{{tool}} {{outcome}}`], unit: 'ops' },
          { title: 'Refreshes by outcome', targets: [`${rate('connector_refreshes_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Connections needing a reconnect', targets: ['max(connector_reconnects_needed)|needs reconnect'] },
        ],
      },
      {
        title: 'Memory',
        panels: [
          {
            title: 'Recall and search latency',
            targets: [
              `${quantile(0.99, 'memory_recall_duration_seconds', '', 'job=~"memory"')}|recall p99`,
              `${quantile(0.99, 'memory_search_duration_seconds', '', 'job=~"memory"')}|search p99`,
              `${quantile(0.5, 'memory_recall_duration_seconds', '', 'job=~"memory"')}|recall p50`,
            ],
            unit: 's',
          },
          { title: 'Memories held', targets: ['max(memory_memories)|memories'] },
        ],
      },
      {
        title: 'Contracts',
        panels: [
          { title: 'Compiles by outcome', targets: [`${rate('contracts_compiles_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Test runs by outcome', targets: [`${rate('contracts_tests_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
          { title: 'Deploys by outcome', targets: [`${rate('contracts_deploys_total', 'outcome')}|{{outcome}}`], unit: 'ops' },
          {
            title: 'Deploy gas and spend',
            description: 'Per deploy mined within its request: gas used (p50) and what it cost in the chain’s native unit (mean).',
            targets: [
              `${quantile(0.5, 'contracts_deploy_gas_used', '', 'job=~"contracts"')}|gas p50`,
              'sum(rate(contracts_deploy_spend_sum[$__rate_interval])) / sum(rate(contracts_deploy_spend_count[$__rate_interval]))|spend per deploy',
            ],
          },
        ],
      },
      ...serviceRows,
    ],
  },
];

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template literal.
const datasource = { type: 'prometheus', uid: '${datasource}' };

/** A dashboard as Grafana's JSON model (schemaVersion 39): a datasource variable, a job variable, rows of panels. */
export function dashboardJson(dashboard: Dashboard): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let y = 0;
  let id = 1;
  for (const row of dashboard.rows) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y: y++ }, panels: [] });
    let x = 0;
    for (const panel of row.panels) {
      const w = panel.wide ? 24 : 12;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push(panelJson(panel, id++, { h: 8, w, x, y }));
      x += w;
    }
    y += 8;
  }
  return {
    uid: dashboard.uid,
    title: dashboard.title,
    description: dashboard.description,
    tags: ['platform'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    graphTooltip: 1,
    templating: {
      list: [
        { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          name: 'job',
          label: 'Service',
          type: 'query',
          datasource,
          query: { query: `label_values(${dashboard.jobsOf}, job)`, refId: 'jobs' },
          definition: `label_values(${dashboard.jobsOf}, job)`,
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          refresh: 2,
          sort: 1,
          hide: 0,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

function panelJson(panel: Panel, id: number, gridPos: { h: number; w: number; x: number; y: number }): Record<string, unknown> {
  return {
    id,
    type: panel.kind ?? 'timeseries',
    title: panel.title,
    ...(panel.description && { description: panel.description }),
    datasource,
    gridPos,
    fieldConfig: { defaults: { unit: panel.unit ?? 'short' }, overrides: [] },
    options:
      panel.kind === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'] }, colorMode: 'value' } : { legend: { displayMode: 'list', placement: 'bottom' } },
    targets: panel.targets.map((target, index) => {
      const [expr, legend] = target.split('|');
      return { refId: String.fromCharCode(65 + index), datasource, expr, legendFormat: legend ?? '' };
    }),
  };
}

export const dashboardsDir = join(import.meta.dirname, '..', '..', '..', 'deploy', 'observability', 'dashboards');

/** The file's text as written: two-space JSON and a final newline. */
export function dashboardText(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboardJson(dashboard), null, 2)}\n`;
}

if (import.meta.main) for (const dashboard of dashboards) writeFileSync(join(dashboardsDir, dashboard.file), dashboardText(dashboard));
