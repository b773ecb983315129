import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';

/**
 * Logs for a person at a terminal running every service in one process (`platform up`): one line per record,
 * prefixed by its service, as `docker compose up` prints (`router       POST /v/invites/redeem 200 6.9 ms`), in place
 * of pino-pretty's blocks of six to eight lines per request. Records about one request (Fastify's "incoming request"
 * and "request completed", a refusal logged at info) are left out unless `requests` is on; warnings and errors
 * always show. JSON lines are untouched wherever this is not switched on.
 */
export interface TerminalLogLines {
  /** One line per completed request (`LOG_LEVEL=debug`, or `platform up --log-requests`). */
  requests: boolean;
  /** ANSI colours for the service prefix and the level. */
  color: boolean;
}

// Environment data reaches every worker thread started afterwards (settlement's front threads log too).
const settingKey = 'platform:terminal-log-lines';

/** Switches this process, and the worker threads it starts from now on, to terminal log lines. */
export function useTerminalLogLines(options: TerminalLogLines): void {
  setEnvironmentData(settingKey, { ...options });
}

/** The terminal log lines switched on for this process, if any. */
export function terminalLogLines(): TerminalLogLines | undefined {
  const value = getEnvironmentData(settingKey) as TerminalLogLines | undefined;
  return value === undefined ? undefined : { requests: value.requests === true, color: value.color === true };
}

/** The width of the service column: the longest service name (`marketplace`) and the gap after it. */
const serviceColumn = 13;
// Members every record has, or that the line shows in its own way.
// A trace's ids are for the collector, not for a person reading the terminal.
const shownApart = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'reqId', 'err', 'req', 'res', 'responseTime', 'trace_id', 'span_id']);
const levels: Record<number, { name: string; color: number }> = {
  10: { name: 'trace', color: 90 },
  20: { name: 'debug', color: 90 },
  40: { name: 'WARN', color: 33 },
  50: { name: 'ERROR', color: 31 },
  60: { name: 'FATAL', color: 31 },
};
const serviceColors = [36, 32, 35, 34, 33, 96, 92, 95, 94, 93];
/** Requests seen but not completed, at most this many remembered (a request that never completes is forgotten). */
const pendingLimit = 1_000;

/**
 * A pino destination writing one terminal line per JSON record.
 *
 * @example pino({ level: 'info' }, terminalLogStream('router', { requests: false, color: true }))
 */
export function terminalLogStream(
  service: string,
  options: TerminalLogLines,
  write: (line: string) => void = (line) => void process.stdout.write(line),
): { write(chunk: string): void } {
  const paint = (code: number, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[39m` : text);
  const prefix = paint(serviceColors[hashOf(service) % serviceColors.length] as number, service.padEnd(serviceColumn - 1));
  const pending = new Map<string, string>();
  return {
    write(chunk) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(chunk) as Record<string, unknown>;
      } catch {
        write(chunk);
        return;
      }
      const text = lineOf(record, options, pending);
      if (text === undefined) return;
      const level = levels[record.level as number];
      const tag = level === undefined ? '' : `${paint(level.color, level.name)} `;
      write(`${prefix} ${tag}${text}\n`);
    },
  };
}

/** The line for one record, or undefined when it is not shown. */
function lineOf(record: Record<string, unknown>, options: TerminalLogLines, pending: Map<string, string>): string | undefined {
  const reqId = typeof record.reqId === 'string' ? record.reqId : undefined;
  const level = typeof record.level === 'number' ? record.level : 30;
  if (reqId !== undefined && record.msg === 'incoming request') {
    const req = (record.req ?? {}) as { method?: string; url?: string };
    if (options.requests) remember(pending, reqId, `${req.method ?? '?'} ${req.url ?? '?'}`);
    return undefined;
  }
  if (reqId !== undefined && record.msg === 'request completed') {
    if (!options.requests) return undefined;
    const request = pending.get(reqId) ?? reqId;
    pending.delete(reqId);
    const status = (record.res as { statusCode?: number } | undefined)?.statusCode ?? '?';
    const took = typeof record.responseTime === 'number' ? ` ${record.responseTime.toFixed(1)} ms` : '';
    return `${request} ${status}${took}`;
  }
  // Anything else about one request (a refusal, a debug note) is request detail; warnings and errors are not.
  if (reqId !== undefined && level < 40 && !options.requests) return undefined;
  // Fastify's own, once per listener: each service says where it listens in its own line (and `up`'s table does).
  if (level < 40 && typeof record.msg === 'string' && record.msg.startsWith('Server listening at ')) return undefined;
  const parts = [String(record.msg ?? '')];
  for (const [key, value] of Object.entries(record)) if (!shownApart.has(key) && value !== undefined) parts.push(`${key}=${shown(value)}`);
  const err = record.err as { message?: string; stack?: string } | undefined;
  if (err !== undefined) {
    // The stack only for errors (a bug); a warning's reason is its message.
    const stack = level >= 50 && typeof err.stack === 'string' ? err.stack.split('\n').slice(1).join('\n') : '';
    parts.push(`: ${err.message ?? 'error'}${stack === '' ? '' : `\n${stack}`}`);
  }
  return parts.join(' ').replace(' : ', ': ');
}

function remember(pending: Map<string, string>, reqId: string, request: string): void {
  if (pending.size >= pendingLimit) pending.delete(pending.keys().next().value as string);
  pending.set(reqId, request);
}

/** A value as `key=value` shows it: plain words bare, text with spaces quoted, objects as short JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 200 ? `${json.slice(0, 199)}…` : json;
}

function hashOf(text: string): number {
  let hash = 0;
  for (const char of text) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return hash;
}
