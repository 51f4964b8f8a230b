/**
 * The webhook's settings, after AWS Node Termination Handler's `--webhook-url`, `--webhook-headers` and
 * `--webhook-template`: where `drainbridge run` posts its notifications, with which headers and body, and
 * how long a branch may stay blocked before anyone is told. Unset URL: no notifications.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import { isSecretRef } from '../secrets/secret-refs.ts';
import { wholeNumber } from '../settings/parsers.ts';
import { type Setting, setting, textsOf } from '../settings/setting.ts';
import { presetOrTemplate, type WebhookTemplate } from './template.ts';

const webhookUrl = z
  .string()
  .refine((v) => isSecretRef(v) || /^https?:\/\/[^\s]+$/.test(v), {
    message: 'must be an http(s) URL or an ssm:/secretsmanager: reference',
  })
  .optional();

const headers = z
  .string()
  .transform((text, ctx) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of header names to strings' });
      return z.NEVER;
    }
    const ok =
      parsed !== null &&
      typeof parsed === 'object' &&
      !Array.isArray(parsed) &&
      Object.values(parsed).every((v) => typeof v === 'string');
    if (!ok) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of header names to strings' });
      return z.NEVER;
    }
    return parsed as Record<string, string>;
  })
  .optional();

export const NOTIFY_SETTINGS = {
  url: setting({
    env: 'DRAINBRIDGE_WEBHOOK_URL',
    parse: webhookUrl,
    default: undefined,
    help: '`drainbridge run`: URL notifications are posted to (Slack incoming webhook or any JSON receiver), or an `ssm:`/`secretsmanager:` reference to it; never logged (docs/notifications.md; unset: no notifications)',
    secret: true,
    readBy: ['run'],
  }),
  urlFile: setting({
    env: 'DRAINBRIDGE_WEBHOOK_URL_FILE',
    parse: z.string().min(1).optional(),
    default: undefined,
    help: 'a file holding the webhook URL (a mounted Secret), instead of DRAINBRIDGE_WEBHOOK_URL',
    readBy: ['run'],
  }),
  template: setting({
    env: 'DRAINBRIDGE_WEBHOOK_TEMPLATE',
    parse: z.string().min(1),
    default: 'slack',
    help: '`slack` (a `{"text": …}` message), `json` (every field), `@FILE` or an inline JSON template with `{{node}}`, `{{event}}`, `{{summary}}`, `{{blockers}}`, … (docs/notifications.md)',
    readBy: ['run'],
  }),
  headers: setting({
    env: 'DRAINBRIDGE_WEBHOOK_HEADERS',
    parse: headers,
    default: undefined,
    help: 'extra HTTP headers as a JSON object, e.g. `{"Authorization":"Bearer …"}` (values never logged)',
    secret: true,
    readBy: ['run'],
  }),
  blockedAfterSeconds: setting({
    env: 'DRAINBRIDGE_WEBHOOK_BLOCKED_AFTER',
    parse: wholeNumber(1, 604_800),
    default: '600',
    help: 'seconds a branch stays blocked (a PodDisruptionBudget, a bare pod, …) before an "evacuation blocked" notification names the blocker',
    readBy: ['run'],
  }),
};

/** The webhook as `drainbridge run` uses it; `url` may still be a secret reference (resolved at start). */
export interface WebhookSettings {
  readonly url: string;
  readonly template: WebhookTemplate;
  readonly headers: Readonly<Record<string, string>>;
  readonly blockedAfterMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

function read<T>(declared: Setting<z.ZodType<T, string | undefined>>, env: Env, problems: FieldProblem[]) {
  const texts = textsOf({ it: declared }, env, { emptyIsUnset: true });
  const parsed = declared.parse.safeParse(texts[declared.env]);
  if (parsed.success) return parsed.data;
  problems.push({ path: declared.env, message: parsed.error.issues[0]?.message ?? 'is not valid' });
  return undefined;
}

function readUrlFile(path: string, problems: FieldProblem[]): string | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text) return text;
    problems.push({ path: NOTIFY_SETTINGS.urlFile.env, message: `${path} is empty` });
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    problems.push({ path: NOTIFY_SETTINGS.urlFile.env, message: `${path} could not be read (${code})` });
  }
  return undefined;
}

function urlOf(env: Env, problems: FieldProblem[]): string | undefined {
  const inline = read(NOTIFY_SETTINGS.url, env, problems);
  const file = read(NOTIFY_SETTINGS.urlFile, env, problems);
  if (inline !== undefined && file !== undefined) {
    problems.push({ path: NOTIFY_SETTINGS.urlFile.env, message: `set it or ${NOTIFY_SETTINGS.url.env}, not both` });
    return undefined;
  }
  if (file === undefined) return inline;
  const fromFile = readUrlFile(file, problems);
  if (fromFile !== undefined && !/^https?:\/\/\S+$/.test(fromFile)) {
    problems.push({ path: NOTIFY_SETTINGS.urlFile.env, message: `${file} does not hold an http(s) URL` });
    return undefined;
  }
  return fromFile;
}

/** The webhook settings, or undefined when no URL is set; a bad value throws a ConfigError naming its variable. */
export function loadWebhookSettings(env: Env): WebhookSettings | undefined {
  const problems: FieldProblem[] = [];
  const url = urlOf(env, problems);
  const templateText = read(NOTIFY_SETTINGS.template, env, problems);
  const headerValues = read(NOTIFY_SETTINGS.headers, env, problems) ?? {};
  const blockedAfterSeconds = read(NOTIFY_SETTINGS.blockedAfterSeconds, env, problems);
  let template: WebhookTemplate | undefined;
  if (templateText !== undefined) {
    try {
      template = presetOrTemplate(templateText);
    } catch (error) {
      problems.push({ path: NOTIFY_SETTINGS.template.env, message: (error as Error).message });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  if (url === undefined || template === undefined || blockedAfterSeconds === undefined) return undefined;
  return { url, template, headers: headerValues, blockedAfterMs: blockedAfterSeconds * 1000 };
}
