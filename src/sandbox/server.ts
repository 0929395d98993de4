import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createAdmin } from './admin.js';
import { handleAdmin } from './admin-http.js';
import { bump, type Reply, type SandboxContext } from './context.js';
import { decideFaults, retryAfterValue, type FaultDecision } from './faults.js';
import { errorBody, jsonPayload, parseJsonSafe, readBody } from './http.js';
import { bearerProblem, bearerToken } from './keys.js';
import { buildOpenApi } from './openapi.js';
import { newBucket, rateLimitHeaders, takeToken } from './rate-limit.js';
import { publicBaseUrl } from './public-url.js';
import { matchRoute, type Route } from './routes.js';
import { handleService } from './service.js';
import { specOnlyReply } from './spec-only.js';
import type { SandboxAdmin } from './types.js';

/** Waits `ms`, or less if the client hangs up first (a client timeout must not leave timers behind). */
function sleepUnlessClosed(ms: number, socket: Socket): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    socket.once('close', done);
    function done() {
      clearTimeout(timer);
      socket.off('close', done);
      resolve();
    }
  });
}

/** Creates the node:http server of a sandbox context. */
export function createSandboxServer(ctx: SandboxContext, admin: SandboxAdmin = createAdmin(ctx)) {
  const sockets = new Set<Socket>();
  // Slow clients (slowloris: headers or a body dripped a byte at a time) get 408 and lose the
  // socket once the request timeout passes; Node checks every `connectionsCheckingInterval`.
  const limit = ctx.options.requestTimeoutMs;
  const timeouts =
    limit > 0
      ? {
          requestTimeout: limit,
          headersTimeout: limit,
          connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limit / 4))),
        }
      : {};
  const server = createServer(timeouts, (req, res) => {
    dispatch(ctx, admin, req, res).catch((err: unknown) => {
      // A bug must not kill the sandbox: answer 500 and keep serving.
      if (!res.headersSent)
        write(res, { status: 500, body: errorBody(500, `Internal sandbox error: ${String(err)}`) });
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return { server, sockets };
}

async function dispatch(
  ctx: SandboxContext,
  admin: SandboxAdmin,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  const route = matchRoute(path);
  if (route.kind === 'admin') {
    const reply = await handleAdmin(ctx, admin, req, path);
    // What the answer acknowledges is on disk first (--state).
    await ctx.persisted();
    return write(res, reply);
  }
  if (route.kind === 'openapi') {
    if (req.method !== 'GET') return count(ctx, res, '/openapi.json', notAllowed(req, path, 'GET'));
    return write(res, {
      status: 200,
      body: buildOpenApi(publicBaseUrl(ctx.baseUrl, req.headers.host)),
    });
  }
  if (route.kind === 'none') {
    return count(ctx, res, '(unknown)', {
      status: 404,
      body: errorBody(404, `No route ${req.method} ${path}`),
    });
  }
  if (req.method !== route.method)
    return count(ctx, res, route.statsPath, notAllowed(req, path, route.method));
  await serve(ctx, req, res, route);
}

function notAllowed(req: IncomingMessage, path: string, allow: string): Reply {
  return {
    status: 405,
    headers: { Allow: allow },
    body: errorBody(405, `${req.method} ${path}: method not allowed; use ${allow}`),
  };
}

async function serve(
  ctx: SandboxContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: Extract<Route, { kind: 'service' }>,
) {
  const fault = decideFaults(
    ctx.faults,
    route.statsPath.replace('{job_id}', route.jobId ?? ''),
    ctx.random,
  );
  if (fault.delayMs > 0) {
    await sleepUnlessClosed(fault.delayMs, req.socket);
    if (req.socket.destroyed) return;
  }
  if (fault.reset) {
    bump(ctx.stats.requests_by_status, 'reset');
    bump(ctx.stats.requests_by_path, route.statsPath);
    req.socket.destroy();
    return;
  }
  const mode = (r: Reply) => (ctx.options.specOnly ? specOnlyReply(r) : r);
  if (fault.status !== undefined)
    return count(ctx, res, route.statsPath, mode(injected(ctx, fault)));
  const reply = mode(await processRequest(ctx, req, route));
  // Every change the answer acknowledges (a job, a charge) is on disk before it is sent (--state).
  await ctx.persisted();
  if (fault.resetAfter) {
    bump(ctx.stats.requests_by_status, 'reset');
    bump(ctx.stats.requests_by_path, route.statsPath);
    req.socket.destroy();
    return;
  }
  count(ctx, res, route.statsPath, reply, fault.truncate === true);
}

function injected(ctx: SandboxContext, fault: FaultDecision): Reply {
  const status = fault.status as number;
  const headers: Record<string, string> = {};
  if (status === 429 || status === 503) {
    headers['Retry-After'] = retryAfterValue(fault.retryAfter, fault.retryAfterS, ctx.now());
  }
  return { status, headers, body: errorBody(status, `Injected fault: ${status}`) };
}

async function processRequest(
  ctx: SandboxContext,
  req: IncomingMessage,
  route: Extract<Route, { kind: 'service' }>,
): Promise<Reply> {
  const token = bearerToken(req.headers.authorization);
  // Every 401 message says the key is invalid (api-spec.md section 7), then why.
  if (!token) return unauthorized(`Invalid API key: ${bearerProblem(req.headers.authorization)}`);
  const auth = ctx.store.authenticate(token);
  if (!auth) return unauthorized('Invalid API key: the key is unknown or was revoked');
  if (auth.account.suspended) {
    return {
      status: 403,
      body: errorBody(403, `Account ${auth.account.id} is suspended`, {
        code: 'account_suspended',
      }),
    };
  }
  let rateHeaders: Record<string, string> = {};
  const rate = ctx.options.rateLimit;
  if (rate > 0) {
    const burst = rate * 2;
    let bucket = ctx.buckets.get(auth.key.id);
    if (!bucket) ctx.buckets.set(auth.key.id, (bucket = newBucket(burst, ctx.now())));
    const taken = takeToken(bucket, ctx.now(), rate, burst);
    rateHeaders = rateLimitHeaders(rate, taken);
    if (!taken.ok) {
      return {
        status: 429,
        headers: { ...rateHeaders, 'Retry-After': String(taken.resetS) },
        body: errorBody(
          429,
          `Rate limit exceeded: at most ${rate} requests per second per key (burst ${burst})`,
        ),
      };
    }
  }
  let body: unknown;
  if (route.method === 'POST') {
    const read = await readBody(req, ctx.options.maxBodyBytes);
    if (!read.ok)
      return {
        status: 413,
        headers: { ...rateHeaders, Connection: 'close' },
        body: errorBody(413, read.message),
      };
    const parsed = parseJsonSafe(read.text);
    if (!parsed.ok)
      return { status: 400, headers: rateHeaders, body: errorBody(400, parsed.message) };
    body = parsed.value;
  }
  const idem = req.headers['idempotency-key'];
  const reply = handleService(ctx, {
    route: route.route,
    account: auth.account,
    body,
    jobId: route.jobId,
    idempotencyKey:
      typeof idem === 'string' && idem !== '' && !ctx.options.specOnly ? idem : undefined,
    baseUrl: publicBaseUrl(ctx.baseUrl, req.headers.host),
  });
  reply.headers = { ...rateHeaders, ...reply.headers };
  return reply;
}

function unauthorized(message: string): Reply {
  // The 401 body is exactly {status, error, message} (api-spec.md section 7).
  return { status: 401, body: { status: 401, error: 'Unauthorized', message } };
}

function count(
  ctx: SandboxContext,
  res: ServerResponse,
  statsPath: string,
  reply: Reply,
  truncate = false,
): void {
  bump(ctx.stats.requests_by_status, String(reply.status));
  bump(ctx.stats.requests_by_path, statsPath);
  write(res, reply, truncate);
}

function write(res: ServerResponse, reply: Reply, truncate = false): void {
  const payload = jsonPayload(reply.body);
  res.writeHead(reply.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(payload.length),
    ...reply.headers,
  });
  if (truncate) {
    // Headers promise the full length; only part of the body arrives before the socket dies.
    res.write(payload.subarray(0, Math.floor(payload.length / 2)), () => res.destroy());
    return;
  }
  res.end(payload);
  if (reply.headers?.Connection === 'close') res.on('finish', () => res.req.socket.destroy());
}
