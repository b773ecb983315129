import { ServiceError } from '@platform/kit/errors';

/** Where a caller starts (or restarts) a connection; every refusal about a missing or dead one names it. */
export const connectRoute = 'POST /v1/connect';

/** 409 rather than 404: the route and the tool exist, the user's state is what is missing. */
export function notConnected(connector: string): ServiceError {
  return new ServiceError('conflict', `${connector} is not connected for this user; connect it first with ${connectRoute} {"connector": "${connector}"}`, {
    details: { reason: 'not_connected', connect: connectRoute },
  });
}

export function needsReconnect(connector: string): ServiceError {
  return new ServiceError('conflict', `the ${connector} connection needs reconnecting (the provider refused its credential); call ${connectRoute}`, {
    details: { reason: 'needs_reconnect', connect: connectRoute },
  });
}
