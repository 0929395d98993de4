/** Shared test set-up: a fake clock whose sleep advances time, and a sandbox with a client. */
import { createClient, type ClientOptions, type EnrichClient } from '../../src/api/client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { SandboxHandle, SandboxOptions } from '../../src/sandbox/index.js';

/** A clock that only moves when the code under test sleeps. */
export function fakeTime(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
  };
}

export interface Rig {
  sandbox: SandboxHandle;
  client: EnrichClient;
  time: ReturnType<typeof fakeTime>;
  debug: string[];
  /** Builds another client on the same sandbox and clock. */
  makeClient(over?: Partial<ClientOptions>): EnrichClient;
  close(): Promise<void>;
}

/** Starts a sandbox sharing a fake clock with a client that never really sleeps. */
export async function startRig(
  sandboxOptions: SandboxOptions = {},
  clientOptions: Partial<ClientOptions> = {},
): Promise<Rig> {
  const time = fakeTime();
  const sandbox = await startSandbox({ now: time.clock.now, ...sandboxOptions });
  const debug: string[] = [];
  const clients: EnrichClient[] = [];
  const makeClient = (over: Partial<ClientOptions> = {}) => {
    const c = createClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0.5,
      debug: (line) => debug.push(line),
      retry: { baseMs: 100 },
      ...clientOptions,
      ...over,
    });
    clients.push(c);
    return c;
  };
  const client = makeClient();
  return {
    sandbox,
    client,
    time,
    debug,
    makeClient,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sandbox.close();
    },
  };
}
