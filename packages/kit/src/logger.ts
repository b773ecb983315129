import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { traceLogFields } from './observability/tracing.ts';
import { terminalLogLines, terminalLogStream } from './terminal-log-lines.ts';

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

const noTraceFields = Object.freeze({});

/**
 * The service logger: JSON lines in production, pretty when writing to a terminal, and one line per record prefixed by
 * the service when `platform up` runs every service in one terminal (terminal-log-lines.ts).
 * Secrets never reach it: request logs carry method, url and status only. A line written while a span is active
 * carries its `trace_id` and `span_id` (observability/tracing.ts); with tracing off, nothing is added.
 *
 * @example const logger = createLogger({ level: 'info', service: 'scheduler' })
 */
export function createLogger(options: {
  level: LogLevel;
  service: string;
  pretty?: boolean;
  /** Where JSON lines go instead of stdout (a test reads them). */
  destination?: DestinationStream;
}): Logger {
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  const settings: LoggerOptions = {
    level: options.level,
    base: { service: options.service },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-scheduler-agent"]',
        'req.headers["x-ledger-agent"]',
        'req.headers["x-platform-user-api-key"]',
        'req.headers["x-ledger-payment"]',
        'req.headers["x-developer-token"]',
        'req.headers["x-connector-agent"]',
      ],
      remove: true,
    },
    mixin: () => traceLogFields() ?? noTraceFields,
    // pino's own merge copies into the mixin's object; a line outside any span is left exactly as it was.
    mixinMergeStrategy: (mergeObject, mixinObject) => (mixinObject === noTraceFields ? mergeObject : Object.assign(mixinObject, mergeObject)),
  };
  if (options.destination !== undefined) return pino(settings, options.destination);
  // Switched on by `platform up` for its terminal, in its worker threads too (their stdout is no terminal).
  const lines = options.pretty === false ? undefined : terminalLogLines();
  if (lines !== undefined) return pino(settings, terminalLogStream(options.service, lines));
  if (pretty) return pino({ ...settings, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } });
  return pino(settings);
}
