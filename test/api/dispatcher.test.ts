import { EnvHttpProxyAgent, Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/api/dispatcher.js';

const init = { connectMs: 1000, connections: 2 };

describe('createDispatcher', () => {
  it('uses a keep-alive Pool when no proxy is configured', async () => {
    const d = createDispatcher(new URL('https://api.example.com'), { ...init, env: {} });
    expect(d).toBeInstanceOf(Pool);
    await d.close();
  });

  it('honours HTTPS_PROXY / http_proxy through EnvHttpProxyAgent', async () => {
    for (const env of [
      { HTTPS_PROXY: 'http://proxy.internal:3128' },
      { http_proxy: 'http://p:8080' },
    ]) {
      const d = createDispatcher(new URL('https://api.example.com'), { ...init, env });
      expect(d).toBeInstanceOf(EnvHttpProxyAgent);
      await d.close();
    }
  });

  it('never sends loopback traffic (the sandbox) through a proxy', async () => {
    const env = {
      HTTPS_PROXY: 'http://proxy.internal:3128',
      HTTP_PROXY: 'http://proxy.internal:3128',
    };
    for (const host of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010']) {
      const d = createDispatcher(new URL(host), { ...init, env });
      expect(d).toBeInstanceOf(Pool);
      await d.close();
    }
  });
});
