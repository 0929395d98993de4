import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { isEnrichError } from '../errors.js';
import { adminSchemas } from './admin.js';
import type { Reply, SandboxContext } from './context.js';
import { errorBody, parseJsonSafe, readBody } from './http.js';
import { bearerToken, hashSecret, sameHash } from './keys.js';
import type { SandboxAdmin } from './types.js';
import { issuesToFieldErrors, summarise } from './validation.js';

type Parsed<T> = { ok: true; value: T } | { ok: false; reply: Reply };

async function body<T>(
  ctx: SandboxContext,
  req: IncomingMessage,
  schema: z.ZodType<T>,
): Promise<Parsed<T>> {
  const read = await readBody(req, ctx.options.maxBodyBytes);
  if (!read.ok) return { ok: false, reply: { status: 413, body: errorBody(413, read.message) } };
  const parsed = parseJsonSafe(read.text.trim() === '' ? '{}' : read.text);
  if (!parsed.ok)
    return { ok: false, reply: { status: 400, body: errorBody(400, parsed.message) } };
  const r = schema.safeParse(parsed.value);
  if (!r.success) {
    const errors = issuesToFieldErrors(r.error.issues);
    return {
      ok: false,
      reply: { status: 400, body: errorBody(400, summarise(errors), { errors }) },
    };
  }
  return { ok: true, value: r.data };
}

/** Answers a request under /_sandbox/ (admin token required). */
export async function handleAdmin(
  ctx: SandboxContext,
  admin: SandboxAdmin,
  req: IncomingMessage,
  path: string,
): Promise<Reply> {
  const token = bearerToken(req.headers.authorization);
  if (!token || !sameHash(hashSecret(token), hashSecret(ctx.store.adminToken))) {
    return {
      status: 401,
      body: errorBody(401, 'Invalid or missing admin token (Authorization: Bearer <admin token>)'),
    };
  }
  const method = req.method ?? 'GET';
  let parts: string[];
  try {
    parts = path.split('/').slice(2).map(decodeURIComponent); // ['', '_sandbox', ...]
  } catch {
    // A malformed %-escape is the client's mistake, not a sandbox error.
    return { status: 400, body: errorBody(400, `Malformed path ${path}: invalid %-escape`) };
  }
  const [resource, id] = parts;
  const allowed = (methods: string): Reply => ({
    status: 405,
    headers: { Allow: methods },
    body: errorBody(405, `${method} ${path}: method not allowed; use ${methods}`),
  });
  try {
    if (resource === 'accounts' && id === undefined) {
      if (method === 'GET') return { status: 200, body: { accounts: admin.listAccounts() } };
      if (method !== 'POST') return allowed('GET, POST');
      const b = await body(ctx, req, adminSchemas.createAccount);
      return b.ok ? { status: 201, body: admin.createAccount(b.value) } : b.reply;
    }
    if (resource === 'accounts' && id !== undefined && parts.length === 2) {
      if (method === 'GET') {
        const acc = admin.getAccount(id);
        return acc
          ? { status: 200, body: acc }
          : { status: 404, body: errorBody(404, `Account ${id} not found`) };
      }
      if (method !== 'PUT') return allowed('GET, PUT');
      const b = await body(ctx, req, adminSchemas.updateAccount);
      if (!b.ok) return b.reply;
      admin.updateAccount(id, b.value);
      return { status: 200, body: admin.getAccount(id) };
    }
    if (resource === 'keys' && id === undefined) {
      if (method === 'GET') return { status: 200, body: { keys: admin.listKeys() } };
      if (method !== 'POST') return allowed('GET, POST');
      const b = await body(ctx, req, adminSchemas.createKey);
      return b.ok ? { status: 201, body: admin.createKey(b.value) } : b.reply;
    }
    if (resource === 'keys' && id !== undefined && parts.length === 2) {
      if (method !== 'DELETE') return allowed('DELETE');
      return admin.revokeKey(id)
        ? { status: 200, body: { id, revoked: true } }
        : { status: 404, body: errorBody(404, `Key ${id} not found`) };
    }
    if (resource === 'clock' && parts.length === 1)
      return /^(GET|POST)$/.test(method) ? await clockRoute(ctx, admin, req) : allowed('GET, POST');
    if (resource === 'faults' && parts.length === 1) {
      if (method === 'GET') return { status: 200, body: admin.getFaults() };
      if (method !== 'PUT') return allowed('GET, PUT');
      const read = await readBody(req, ctx.options.maxBodyBytes);
      if (!read.ok) return { status: 413, body: errorBody(413, read.message) };
      const parsed = parseJsonSafe(read.text);
      if (!parsed.ok) return { status: 400, body: errorBody(400, parsed.message) };
      admin.setFaults(parsed.value as never);
      return { status: 200, body: admin.getFaults() };
    }
    if (resource === 'stats' && parts.length === 1) {
      return method === 'GET' ? { status: 200, body: admin.stats() } : allowed('GET');
    }
    return { status: 404, body: errorBody(404, `No admin route ${method} ${path}`) };
  } catch (err) {
    if (!isEnrichError(err)) throw err;
    const status = err.code === 'API_NOT_FOUND' ? 404 : 400;
    return { status, body: errorBody(status, err.message) };
  }
}

/** GET shows the sandbox clock; POST {advance_ms} moves it (range-checked), then shows it. */
async function clockRoute(
  ctx: SandboxContext,
  admin: SandboxAdmin,
  req: IncomingMessage,
): Promise<Reply> {
  if (req.method === 'POST') {
    const b = await body(ctx, req, adminSchemas.clock);
    if (!b.ok) return b.reply;
    admin.advanceClock(b.value.advance_ms);
  }
  return { status: 200, body: clock(ctx) };
}

function clock(ctx: SandboxContext) {
  const now = ctx.now();
  const date = new Date(now);
  // A clock Date cannot show (an injected `now`) is reported as null, never a 500.
  const iso = Number.isNaN(date.getTime()) ? null : date.toISOString();
  return { now: iso, now_ms: Number.isFinite(now) ? now : null, offset_ms: ctx.store.clockOffset };
}
