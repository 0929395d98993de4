import type { ServiceRoute } from './service.js';

/** A matched route: a service endpoint, the OpenAPI document, the admin API, or nothing. */
export type Route =
  | {
      kind: 'service';
      route: ServiceRoute;
      method: 'GET' | 'POST';
      jobId?: string;
      statsPath: string;
    }
  | { kind: 'openapi' }
  | { kind: 'admin' }
  | { kind: 'none' };

const POSTS: Record<string, ServiceRoute> = {
  '/contact': 'contact',
  '/company': 'company',
  '/contacts': 'contacts',
  '/companies': 'companies',
  '/email-verification': 'email-verification',
};

const RESULTS = /^\/(contacts|companies)\/results\/([^/]+)\.json$/;

/** Matches a request path (no query string) to a route. */
export function matchRoute(path: string): Route {
  if (Object.hasOwn(POSTS, path)) {
    return { kind: 'service', route: POSTS[path] as ServiceRoute, method: 'POST', statsPath: path };
  }
  const m = RESULTS.exec(path);
  if (m) {
    let jobId: string;
    try {
      jobId = decodeURIComponent(m[2] as string);
    } catch {
      jobId = m[2] as string;
    }
    return {
      kind: 'service',
      route: `${m[1] as 'contacts' | 'companies'}-results`,
      method: 'GET',
      jobId,
      statsPath: `/${m[1]}/results/{job_id}.json`,
    };
  }
  if (path === '/openapi.json') return { kind: 'openapi' };
  if (path === '/_sandbox' || path.startsWith('/_sandbox/')) return { kind: 'admin' };
  return { kind: 'none' };
}
