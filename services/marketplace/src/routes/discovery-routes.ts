import type { ServiceApp } from '@platform/kit/http/create-app';
import type { RouteDeps } from './route-deps.ts';

export function registerDiscoveryRoutes(_app: ServiceApp, _deps: RouteDeps): void {}
