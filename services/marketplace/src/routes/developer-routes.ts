import type { ServiceApp } from '@platform/kit/http/create-app';
import type { RouteDeps } from './route-deps.ts';

export function registerDeveloperRoutes(_app: ServiceApp, _deps: RouteDeps): void {}
