import { request } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';

/** One answer of the sandbox, body parsed when it is JSON. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Sends one request to a sandbox and reads the whole answer. */
export async function call(
  base: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
  path: string,
  o: {
    key?: string;
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
  let body: string | undefined = o.raw;
  if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await request(`${base}${path}`, { method, headers, body, signal: o.signal });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, text, json };
}

/** A valid bulk contact. */
export function contact(i: number, extra: Record<string, unknown> = {}) {
  return {
    first_name: `Jane${i}`,
    last_name: 'Doe',
    company_domain: 'acme.com',
    custom_fields: { row: i },
    ...extra,
  };
}
