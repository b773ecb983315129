import type { ServiceApp } from '@platform/kit/http/create-app';
import { registerAnalyticsRoutes } from './analytics-routes.ts';
import { registerDashboardRoutes } from './dashboard-routes.ts';
import { registerDeveloperRoutes } from './developer-routes.ts';
import { registerDiscoveryRoutes } from './discovery-routes.ts';
import { registerHostedLogRoutes } from './hosted-log-routes.ts';
import { registerHostedRoutes } from './hosted-routes.ts';
import { registerListingRoutes } from './listing-routes.ts';
import { registerPaymentRoutes } from './payment-routes.ts';
import type { RouteDeps } from './route-deps.ts';

/** Every marketplace route, by group. */
export function registerRoutes(app: ServiceApp, deps: RouteDeps): void {
  registerDeveloperRoutes(app, deps);
  registerListingRoutes(app, deps);
  registerHostedRoutes(app, deps);
  registerHostedLogRoutes(app, deps);
  registerDiscoveryRoutes(app, deps);
  registerAnalyticsRoutes(app, deps);
  registerPaymentRoutes(app, deps);
  registerDashboardRoutes(app, deps);
}
