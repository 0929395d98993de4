import type { z } from 'zod';
import { ApiError } from '../errors.js';
import type { Exchange, RawResponse } from './transport.js';

/**
 * Parses a 2xx body as JSON and checks it against the schema `schema()` gives, or throws
 * MALFORMED_RESPONSE. `accepts`, when given, is a cheaper check that is true only for
 * values the schema accepts unchanged: those skip zod (which copies every object it
 * checks), and the schema is not even asked for (loading zod costs ~8 MB and ~80 ms).
 */
export async function parseBody<S extends z.ZodType>(
  raw: RawResponse,
  ex: Exchange,
  schema: () => Promise<S>,
  accepts?: (json: unknown) => boolean,
): Promise<z.infer<S>> {
  const malformed = (what: string) =>
    new ApiError('MALFORMED_RESPONSE', {
      status: raw.status,
      method: ex.method,
      path: ex.label,
      message: `${ex.method} ${ex.label}: ${raw.status} answer ${what}`,
    });
  let json: unknown;
  try {
    json = JSON.parse(raw.text);
  } catch {
    throw malformed(`is not JSON (${raw.text.length} bytes)`);
  }
  if (accepts?.(json)) return json as z.infer<S>;
  const parsed = (await schema()).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw malformed(`does not match the contract: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
