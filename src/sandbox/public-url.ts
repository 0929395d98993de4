import { isIPv6 } from 'node:net';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** `name[.name…]` (IPv4 included) or `[IPv6]`, then an optional port: nothing else a Host header may hold here. */
const HOST = new RegExp(`^(?:(${LABEL}(?:\\.${LABEL})*)|\\[([0-9a-f:.]+)\\])(?::(\\d{1,5}))?$`);

/** True when the base URL names an unspecified address (0.0.0.0 or ::): not one a client can use. */
function isUnspecified(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === '0.0.0.0' || host === '[::]';
}

/**
 * The base URL to put in answers (download_url). It is the address the sandbox listens on,
 * except when it listens on every interface (0.0.0.0 or ::), where that address reaches no
 * one: then the request's Host header (the address the client used) when it is a plain
 * host name, IPv4 or [IPv6] with an optional port 1-65535; anything else keeps the base URL.
 */
export function publicBaseUrl(baseUrl: string, hostHeader: string | undefined): string {
  if (hostHeader === undefined || hostHeader.length > 260 || !isUnspecified(baseUrl))
    return baseUrl;
  const host = hostHeader.toLowerCase();
  const m = HOST.exec(host);
  if (!m) return baseUrl;
  const [, name, ipv6, port] = m;
  if (name !== undefined && name.length > 253) return baseUrl;
  if (ipv6 !== undefined && !isIPv6(ipv6)) return baseUrl;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return baseUrl;
  return `http://${host}`;
}
