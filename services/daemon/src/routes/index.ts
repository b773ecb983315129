import type { ServiceApp } from '@platform/kit/http/create-app';
import { registerAccountRoutes } from './account-routes.ts';
import { registerChatRoutes } from './chat-routes.ts';
import { registerEventRoutes } from './event-routes.ts';
import { registerHealthRoutes } from './health-routes.ts';
import { registerIntentRoutes } from './intent-routes.ts';
import { registerMarketRoutes } from './market-routes.ts';
import { registerMemoryRoutes } from './memory-routes.ts';
import { registerMessageRoutes } from './message-routes.ts';
import type { RouteDeps } from './route-deps.ts';
import { registerWakeRoutes } from './wake-routes.ts';

/** Every route of the daemon. */
export function registerRoutes(app: ServiceApp, deps: RouteDeps): void {
  registerHealthRoutes(app, deps);
  registerChatRoutes(app, deps);
  registerMessageRoutes(app, deps);
  registerIntentRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerWakeRoutes(app, deps);
  registerAccountRoutes(app, deps);
  registerMemoryRoutes(app, deps);
  registerMarketRoutes(app, deps);
}
