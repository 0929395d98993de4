import { Paths, type BulkKind } from '../contract/paths.js';

/** Where to fetch a job's results, and the path shown in messages. */
export interface ResultsTarget {
  path: string;
  label: string;
  /** True when a download_url was given but pointed at another origin and was ignored. */
  ignoredForeign: boolean;
}

/** Joins the base URL's path prefix (e.g. `/v1`) with an endpoint path. */
export function joinBasePath(base: URL, endpoint: string): string {
  return base.pathname.replace(/\/+$/, '') + endpoint;
}

/**
 * Chooses the results address of a job. A `download_url` on the base URL's origin is
 * used as is; one on any other origin is never sent the key, so the base URL's results
 * path for that job id is used instead.
 */
export function resolveResultsTarget(
  base: URL,
  kind: BulkKind,
  jobId: string,
  downloadUrl?: string,
): ResultsTarget {
  const label = kind === 'contacts' ? Paths.contactsResults(jobId) : Paths.companiesResults(jobId);
  const fallback = { path: joinBasePath(base, label), label, ignoredForeign: false };
  if (!downloadUrl) return fallback;
  let url: URL;
  try {
    url = new URL(downloadUrl, base);
  } catch {
    return { ...fallback, ignoredForeign: true };
  }
  if (url.origin !== base.origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return { ...fallback, ignoredForeign: true };
  }
  return { path: url.pathname + url.search, label: url.pathname, ignoredForeign: false };
}
