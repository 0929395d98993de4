import { EnvHttpProxyAgent, Pool, type Dispatcher } from 'undici';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True when the environment names an HTTP(S) proxy. */
function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy);
}

/**
 * A keep-alive dispatcher for one origin: a Pool (the fastest path, DESIGN.md section 7),
 * or, when proxy variables are set, EnvHttpProxyAgent, which honours HTTP(S)_PROXY and
 * NO_PROXY. Loopback addresses never go through a proxy, so `--sandbox` works behind one.
 */
export function createDispatcher(
  origin: URL,
  init: { connectMs: number; connections: number; env?: NodeJS.ProcessEnv },
): Dispatcher {
  const options = {
    connections: init.connections,
    keepAliveTimeout: 10_000,
    connect: { timeout: init.connectMs },
  };
  const env = init.env ?? process.env;
  if (proxyConfigured(env) && !LOOPBACK.has(origin.hostname)) {
    return new EnvHttpProxyAgent(options);
  }
  return new Pool(origin.origin, options);
}
