import type { EnrichClient, LongWait } from '../api/client.js';
import type { ResolvedSettings, Settings } from '../config/settings.js';
import type { GlobalOptions } from './globals.js';

/** A client ready to use, the settings it came from, and how to shut it all down. */
export interface Service {
  client: EnrichClient;
  settings: ResolvedSettings;
  baseUrl: string;
  /** Set with --sandbox: the embedded sandbox's address. */
  sandbox?: { url: string };
  /**
   * The last balances this service reported for this key's account to any command (the memo
   * `enrich auth status` shows): what a run that asked the service nothing reports as
   * `remaining`. None for the throw-away sandbox.
   */
  lastKnownCredits?: () =>
    { remaining_credits?: number; remaining_verification_credits?: number } | undefined;
  close(): Promise<void>;
}

/**
 * The --debug sink: one stderr line per request or retry decision (never the key). With -v
 * alone, the retries only (`enrich: retrying POST /contacts/bulk in 1200ms (attempt 2 of 5,
 * after 503 Service Unavailable)`): why a run is slow, without every request.
 */
export function debugSink(
  globals: GlobalOptions,
  talk: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): ((line: string) => void) | undefined {
  if (globals.debug) return (line) => talk(`debug: ${line}`);
  if (!globals.verbose || globals.quiet) return undefined;
  return (line) => {
    if (line.startsWith('retrying ')) talk(`enrich: ${line}`);
  };
}

/** Says a long wait a 429 asks for, even with --quiet: a run that waits hours must say why. */
async function longWaitSink(
  talk?: (line: string) => void,
  timeoutFlag?: string,
): Promise<(w: LongWait) => void> {
  const { longWaitLine } = await import('./long-wait.js');
  const say = talk ?? ((line: string) => void process.stderr.write(`${line}\n`));
  return (w) => say(`enrich: warning: ${longWaitLine(w, Date.now(), timeoutFlag)}`);
}

/** The usage error for a missing base URL. */
export async function missingBaseUrl(profile: string) {
  const { usageError } = await import('../errors.js');
  return usageError(`no service base URL configured (profile "${profile}")`, {
    hint: 'pass --base-url https://…, set ENRICH_BASE_URL, run `enrich auth login --base-url https://…`, or try --sandbox',
  });
}

/** AUTH_MISSING for a profile without a key: one the config file does not have is said so. */
async function noKey(settings: ResolvedSettings) {
  const [{ EnrichError }, { unknownProfileText }] = await Promise.all([
    import('../errors.js'),
    import('../config/settings.js'),
  ]);
  const unknown = unknownProfileText(settings);
  return new EnrichError(
    'AUTH_MISSING',
    `no API key for profile "${settings.profile}"${unknown ? `: ${unknown}` : ''}`,
    {
      hint: unknown
        ? `check the profile's name, or save a key under it with \`enrich auth login --profile ${settings.profile}\``
        : 'run `enrich auth login` (or set ENRICH_API_KEY), or try the command offline with --sandbox',
    },
  );
}

/** AUTH_MISSING for a saved key that is not sent to this base URL's origin (settings.keyWithheld). */
async function keyNotForHere(settings: ResolvedSettings) {
  const { EnrichError } = await import('../errors.js');
  const { savedFor, origin } = settings.keyWithheld!;
  const by = settings.sources.baseUrl === 'flag' ? '--base-url' : 'ENRICH_BASE_URL';
  return new EnrichError(
    'AUTH_MISSING',
    `the key of profile "${settings.profile}" was saved for ${savedFor}; it is not sent to ${origin} (${by})`,
    {
      hint: `to use that service, run \`enrich auth login --base-url ${origin}\` (with --profile NAME to keep both keys), or set ENRICH_API_KEY`,
    },
  );
}

/**
 * Opens the service for a command: with --sandbox, an embedded sandbox on 127.0.0.1:0
 * and its key; otherwise the resolved base URL and key (AUTH_MISSING, exit 4, without one).
 */
export async function openService(
  globals: GlobalOptions,
  opts?: {
    sandbox?: { jobMs?: number };
    flags?: Partial<Settings>;
    settings?: ResolvedSettings;
    /** Where --debug and -v lines go (a bulk run: above its spinner); stderr by default. */
    talk?: (line: string) => void;
    /** Keep-alive connections to the service (the client's default, 8, unless more requests run at once). */
    connections?: number;
    /** The flag that sets how long the command may wait (`--timeout`), when it has one. */
    timeoutFlag?: string;
  },
): Promise<Service> {
  const { resolveSettings } = await import('../config/settings.js');
  // The HTTP client (undici) loads only once we know a request will be made.
  const loadClient = async () => (await import('../api/client.js')).createClient;
  const settings =
    opts?.settings ?? resolveSettings({ globals, ...(opts?.flags ? { flags: opts.flags } : {}) });
  for (const repair of settings.repairs) {
    if (!globals.quiet) process.stderr.write(`enrich: warning: fixed permissions of ${repair}\n`);
  }
  const debug = debugSink(globals, opts?.talk);
  // What every client of a command is built with, whichever service it talks to.
  const common = {
    ...(opts?.connections === undefined ? {} : { connections: opts.connections }),
    ...(debug ? { debug } : {}),
    ...(settings.rateLimit !== undefined ? { rateLimit: settings.rateLimit } : {}),
    onLongWait: await longWaitSink(opts?.talk, opts?.timeoutFlag),
  };
  if (globals.sandbox) {
    const { startSandbox } = await import('../sandbox/index.js');
    const sandbox = await startSandbox({ port: 0, jobMs: opts?.sandbox?.jobMs ?? 300 });
    const createClient = await loadClient();
    const client = createClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      ...common,
    });
    debug?.(`sandbox listening on ${sandbox.url}`);
    return {
      client,
      settings,
      baseUrl: sandbox.url,
      sandbox: { url: sandbox.url },
      async close() {
        await client.close();
        await sandbox.close();
      },
    };
  }
  if (!settings.apiKey && settings.keyWithheld) throw await keyNotForHere(settings);
  if (!settings.apiKey) throw await noKey(settings);
  if (!settings.baseUrl) throw await missingBaseUrl(settings.profile);
  const createClient = await loadClient();
  const { credits, idempotencyStore, lastKnownCredits } = await serviceMemos(
    settings.baseUrl,
    settings.apiKey,
    settings.profile,
  );
  const client = createClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    ...common,
    // What the service said about credits and Idempotency-Key outlives the command.
    onCredits: credits.onCredits,
    idempotencyStore,
  });
  return {
    client,
    settings,
    baseUrl: settings.baseUrl,
    lastKnownCredits,
    async close() {
      credits.flush();
      await client.close();
    },
  };
}

/**
 * What a command learns of the service and keeps in the state directory: the balances it
 * reports (per service and key, for `auth status`) and whether it honours Idempotency-Key.
 */
async function serviceMemos(baseUrl: string, apiKey: string, profile: string) {
  const [
    { creditsMemoSink, creditsScope, readCreditsMemo, throttledSink },
    { fileIdempotencyStore },
    { getPaths },
    { accountOfKey },
  ] = await Promise.all([
    import('../config/credits-memo.js'),
    import('../config/idempotency-memo.js'),
    import('../config/paths.js'),
    import('../api/account.js'),
  ]);
  const { stateDir } = getPaths();
  const scope = creditsScope(baseUrl, accountOfKey(apiKey));
  return {
    credits: throttledSink(creditsMemoSink(stateDir, profile, scope)),
    idempotencyStore: fileIdempotencyStore(stateDir),
    lastKnownCredits: () => readCreditsMemo(stateDir, profile, scope),
  };
}
