import pino, { type Logger } from 'pino';

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/**
 * The service logger: JSON lines in production, pretty when writing to a terminal.
 * Secrets never reach it: request logs carry method, url and status only.
 *
 * @example const logger = createLogger({ level: 'info', service: 'scheduler' })
 */
export function createLogger(options: { level: LogLevel; service: string; pretty?: boolean }): Logger {
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  return pino({
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
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  });
}
