import { usageError } from '../errors.js';

/** Checks the base URL and returns it parsed, or throws a usage error. */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw usageError(`base URL: expected an http(s) URL, got "${baseUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(`base URL: expected http:// or https://, got "${url.protocol}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw usageError('base URL: must not carry credentials, a query or a fragment');
  }
  return url;
}
