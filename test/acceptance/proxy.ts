/** A man-in-the-middle service for the acceptance suite: forwards to a sandbox and rewrites answers. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy may do to one exchange. */
export interface ProxyRules {
  /** Rewrites a JSON answer of the sandbox (return undefined to keep it). */
  rewrite?: (path: string, status: number, body: unknown) => unknown;
  /** Answers a redirect to this URL instead of forwarding, when it returns one. */
  redirect?: (method: string, path: string) => string | undefined;
}

/** A running HTTP server and the requests it saw. */
export interface Recorder {
  url: string;
  seen: { method: string; path: string; authorization?: string }[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => resolve(text));
  });
}

function recorderOf(server: Server, url: string, seen: Recorder['seen']): Recorder {
  return {
    url,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A foreign origin that answers 200 `{}` to everything and records who called with what. */
export async function startRecorder(): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  return recorderOf(server, await listen(server), seen);
}

/** Forwards every request to `target` (a sandbox), applying `rules` to its answers. */
export async function startProxy(target: string, rules: ProxyRules): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      const method = req.method ?? 'GET';
      seen.push({ method, path, authorization: req.headers.authorization });
      const location = rules.redirect?.(method, path);
      if (location) {
        res.writeHead(307, { location, 'content-type': 'application/json' }).end('{}');
        return;
      }
      const body = method === 'GET' ? undefined : await readAll(req);
      const headers: Record<string, string> = {};
      for (const h of ['authorization', 'content-type', 'idempotency-key']) {
        const v = req.headers[h];
        if (typeof v === 'string') headers[h] = v;
      }
      const answer = await fetch(`${target}${path}`, { method, headers, body });
      let text = await answer.text();
      try {
        const changed = rules.rewrite?.(path, answer.status, JSON.parse(text));
        if (changed !== undefined) text = JSON.stringify(changed);
      } catch {
        // not JSON: forwarded as it is
      }
      const out: Record<string, string> = { 'content-type': 'application/json' };
      const retry = answer.headers.get('retry-after');
      if (retry) out['retry-after'] = retry;
      res.writeHead(answer.status, out).end(text);
    })().catch(() => res.destroy());
  });
  return recorderOf(server, await listen(server), seen);
}
