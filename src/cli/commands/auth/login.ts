import { EnrichError, usageError } from '../../../errors.js';
import { createClient } from '../../../api/client.js';
import { maskKey } from '../../../config/mask-key.js';
import { getPaths } from '../../../config/paths.js';
import { creditsScope, readCreditsMemo } from '../../../config/credits-memo.js';
import { accountOfKey } from '../../../api/account.js';
import { resolveSettings, unknownProfileText } from '../../../config/settings.js';
import { openConfigStore } from '../../../config/store.js';
import { debugSink, missingBaseUrl } from '../../context.js';
import type { GlobalOptions } from '../../globals.js';
import { printJson, printKeyValues, say } from '../../output.js';
import { promptSecret, readStdin } from './prompt-secret.js';

const SUB_VERB: Record<string, string> = {
  login: 'log in with',
  status: 'check',
  logout: 'remove',
};

function refuseSandbox(globals: GlobalOptions, sub: string): void {
  if (globals.sandbox) {
    throw usageError(
      `enrich auth ${sub}: --sandbox makes a fresh key of its own each time, so it needs no login, and there is no stored key to check or remove`,
      { hint: `leave out --sandbox to ${SUB_VERB[sub] ?? sub} the key of a real service` },
    );
  }
}

/** Gets the key: hidden prompt on a terminal, else the first line of stdin. */
async function acquireKey(globals: GlobalOptions): Promise<string> {
  let text: string;
  if (process.stdin.isTTY) {
    if (!globals.input) {
      throw usageError('enrich auth login: no key on stdin and --no-input forbids prompting', {
        hint: 'pipe the key in: `enrich auth login < key.txt`, or set ENRICH_API_KEY',
      });
    }
    text = await promptSecret('API key (input hidden): ');
  } else {
    text = await readStdin();
  }
  const prompted = process.stdin.isTTY === true;
  const key =
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l !== '') ?? '';
  if (key === '') throw noKeyGiven(prompted);
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw usageError(
      'enrich auth login: expected an API key of printable characters without spaces',
    );
  }
  return key;
}

/** Nothing was typed at the prompt, or stdin held no key: say which, and how to give one. */
function noKeyGiven(prompted: boolean) {
  return prompted
    ? usageError('enrich auth login: no key was entered at the prompt; nothing was saved', {
        hint: 'paste the key at the prompt and press Enter (nothing is shown while you type or paste), or pipe it in: `enrich auth login < key.txt`',
      })
    : usageError(
        'enrich auth login: stdin held no key (it was empty or blank); nothing was saved',
        {
          hint: 'put the key on stdin: `enrich auth login < key.txt` or `printf \'%s\\n\' "$KEY" | enrich auth login`; run it without redirecting stdin to be prompted',
        },
      );
}

/** The service refused the key at the free check: what it means, without the check's request. */
function keyRefused(
  check: { reason: 'invalid' | 'forbidden' | 'not-the-service'; message: string },
  baseUrl: string,
) {
  // The check asks for a job that does not exist; its path means nothing to the user.
  const said = check.message.replace(/^[A-Z]+ \S+: /, '');
  if (check.reason === 'not-the-service')
    return new EnrichError(
      'API_NOT_FOUND',
      `${baseUrl} does not answer as the enrichment service: its results endpoint is not there and it checks no key (404); nothing was saved`,
      {
        hint: 'the base URL is likely wrong (a missing or extra path such as /v1): pass the address your provider documents with --base-url',
      },
    );
  return check.reason === 'invalid'
    ? new EnrichError(
        'AUTH_INVALID',
        `the service at ${baseUrl} does not know this key (${said}); nothing was saved`,
        {
          hint: 'copy the key again from the API Keys section of your account (it may be mistyped, cut short or revoked), then run `enrich auth login` again',
        },
      )
    : new EnrichError(
        'AUTH_FORBIDDEN',
        `the service at ${baseUrl} knows this key but refuses its account (${said}); nothing was saved`,
        { hint: 'the account may be suspended or not allowed to use the API: ask its holder' },
      );
}

/** `enrich auth login`: checks the key at no cost, then saves it (and --base-url) in the profile. */
export async function runLogin(globals: GlobalOptions): Promise<number> {
  refuseSandbox(globals, 'login');
  const settings = resolveSettings({ globals });
  if (!settings.baseUrl) throw await missingBaseUrl(settings.profile);
  const key = await acquireKey(globals);
  const debug = debugSink(globals);
  const client = createClient({
    baseUrl: settings.baseUrl,
    apiKey: key,
    ...(debug ? { debug } : {}),
  });
  try {
    const check = await client.checkKey();
    if (!check.ok) throw keyRefused(check, settings.baseUrl);
  } finally {
    await client.close();
  }
  const store = openConfigStore(getPaths().configDir);
  if (settings.sources.baseUrl === 'flag')
    await store.setValue(settings.profile, 'base_url', settings.baseUrl);
  await store.setValue(settings.profile, 'api_key', key);
  const summary = {
    profile: settings.profile,
    base_url: settings.baseUrl,
    key: maskKey(key),
    config_path: store.path,
  };
  if (globals.json) printJson(summary);
  else
    say(
      globals.quiet,
      `Logged in: profile "${summary.profile}", key ${summary.key} saved in ${summary.config_path}`,
    );
  if (settings.apiKeySource === 'env') {
    say(globals.quiet, 'note: ENRICH_API_KEY is set and takes precedence over the saved key');
  }
  return 0;
}

/** `enrich auth status`: where the key comes from (masked), whether it works, last known credits. */
export async function runStatus(globals: GlobalOptions): Promise<number> {
  refuseSandbox(globals, 'status');
  const s = resolveSettings({ globals });
  const memo =
    s.apiKey && s.baseUrl
      ? readCreditsMemo(
          getPaths().stateDir,
          s.profile,
          creditsScope(s.baseUrl, accountOfKey(s.apiKey)),
        )
      : undefined;
  let check: string;
  let exitCode = 0;
  let hint: string | undefined;
  if (!s.apiKey && s.keyWithheld) {
    check = `no key for ${s.keyWithheld.origin} (the saved one is for ${s.keyWithheld.savedFor}, and only sent there)`;
    exitCode = 4;
    hint = `run \`enrich auth login --base-url ${s.keyWithheld.origin}\` (with --profile NAME to keep both keys), or set ENRICH_API_KEY`;
  } else if (!s.apiKey) {
    const unknown = unknownProfileText(s);
    check = unknown ? `no key: ${unknown}` : 'no key';
    exitCode = 4;
    hint = unknown
      ? `check the profile's name, or save a key under it with \`enrich auth login --profile ${s.profile}\``
      : 'run `enrich auth login`, or set ENRICH_API_KEY';
  } else if (!s.baseUrl) {
    check = 'not checked (no base URL)';
    exitCode = 2;
    hint = 'pass --base-url or run `enrich config set base_url https://…`';
  } else {
    const debug = debugSink(globals);
    const client = createClient({
      baseUrl: s.baseUrl,
      apiKey: s.apiKey,
      ...(debug ? { debug } : {}),
    });
    try {
      const r = await client.checkKey();
      check = r.ok ? 'ok' : r.reason;
      if (!r.ok && r.reason === 'not-the-service') {
        exitCode = 2;
        hint =
          'the base URL is likely wrong: nothing there checks keys (404 even for a key that cannot exist)';
      } else if (!r.ok) exitCode = 4;
    } catch (err) {
      if (!(err instanceof EnrichError)) throw err;
      check = `failed: ${err.message} [${err.code}]`;
      exitCode = err.exitCode;
    } finally {
      await client.close();
    }
  }
  const status = {
    profile: s.profile,
    base_url: s.baseUrl ?? '',
    base_url_source: s.sources.baseUrl,
    key_source:
      s.apiKeySource === 'file'
        ? `file ${s.configPath}`
        : s.apiKeySource === 'env'
          ? 'env ENRICH_API_KEY'
          : 'none',
    key: s.apiKey ? maskKey(s.apiKey) : '',
    check,
    remaining_credits: memo?.remaining_credits ?? '',
    remaining_verification_credits: memo?.remaining_verification_credits ?? '',
    credits_seen_at: memo?.at ?? '',
  };
  if (globals.json) printJson(status);
  else printKeyValues(status);
  if (hint) say(globals.quiet, `hint: ${hint}`);
  return exitCode;
}

/** `enrich auth logout`: removes the profile's stored key. */
export async function runLogout(globals: GlobalOptions): Promise<number> {
  refuseSandbox(globals, 'logout');
  const s = resolveSettings({ globals });
  const store = openConfigStore(getPaths().configDir);
  const removed = await store.unsetValue(s.profile, 'api_key');
  if (globals.json) printJson({ profile: s.profile, removed, config_path: store.path });
  else
    say(
      globals.quiet,
      removed
        ? `Logged out: key of profile "${s.profile}" removed from ${store.path}`
        : `No key was stored for profile "${s.profile}"`,
    );
  if (s.apiKeySource === 'env')
    say(globals.quiet, 'note: ENRICH_API_KEY is still set and still provides a key');
  return 0;
}
