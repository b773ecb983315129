/** The principal token's header (the spec leaves it unnamed; named like the scheduler's X-Scheduler-Agent). */
export const principalHeader = 'X-Connector-Agent';
