import { ServiceCallError } from '@platform/client/service-session';
import { type ErrorCode, errorCatalogue, ServiceError } from '@platform/kit/errors';

/**
 * Runs a call the daemon makes to another service as its agent on the user's behalf (the console's routes), turning
 * the service's refusal into this daemon's envelope with the same code and message (`not_found` stays `not_found`),
 * and a service that cannot be reached into 503 naming it. The owner is always this daemon's own DID.
 */
export async function asAgent<T>(service: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    if (error instanceof ServiceCallError) {
      const code = (error.status >= 500 ? 'unavailable' : error.code in errorCatalogue ? error.code : 'invalid_request') as ErrorCode;
      // A refused bearer or principal is the platform's wiring, not the person's request.
      if (code === 'unauthorized' || code === 'forbidden') throw new ServiceError('unavailable', `${service} refused this agent: ${error.serviceMessage}`);
      throw new ServiceError(code, `${service}: ${error.serviceMessage}`, {
        ...(error.reason === undefined ? {} : { details: { reason: error.reason } }),
      });
    }
    throw new ServiceError('unavailable', `${service} cannot be reached; retry shortly`, { cause: error });
  }
}

/** The 503 for a service this daemon was not given. */
export function notConfigured(service: string, setting: string): ServiceError {
  return new ServiceError('unavailable', `no ${service} is configured: set ${setting}`, { retryable: false });
}
