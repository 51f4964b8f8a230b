/**
 * The body of a webhook POST from a template, as NTH's `--webhook-template`: `slack` posts
 * `{"text": …}` (a Slack incoming webhook, also read by Mattermost, Rocket.Chat and Teams' Slack
 * connector), `json` every field, and a user's own JSON template whose `{{field}}` placeholders take the
 * notification's values (JSON-escaped, so a quote in a blocker's sentence cannot break the body).
 * A template is checked at start by rendering a sample: one that does not yield JSON is refused then.
 */
import { readFileSync } from 'node:fs';
import { type Notification, summaryOf } from './message.ts';

export interface WebhookTemplate {
  /** `slack`, `json`, or `custom` for a user's template. */
  readonly name: string;
  readonly text: string;
}

const PRESETS: Record<string, string> = {
  slack: '{"text":"{{summary}}"}',
  json: '{"source":"drainbridge","event":"{{event}}","node":"{{node}}","requestId":"{{requestId}}","executionId":"{{executionId}}","reason":"{{reason}}","blockers":"{{blockers}}","summary":"{{summary}}","time":"{{time}}"}',
};

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*\}\}/g;
const FIELDS = ['event', 'node', 'requestId', 'executionId', 'reason', 'blockers', 'summary', 'time'] as const;

function valuesOf(notification: Notification): Record<(typeof FIELDS)[number], string> {
  return {
    event: notification.event,
    node: notification.node,
    requestId: notification.requestId,
    executionId: notification.executionId,
    reason: notification.reason,
    blockers: notification.blockers.join('; '),
    summary: summaryOf(notification),
    time: notification.time,
  };
}

/** The body for one notification: each placeholder replaced by its value, escaped for a JSON string. */
export function renderTemplate(template: WebhookTemplate, notification: Notification): string {
  const values: Record<string, string> = valuesOf(notification);
  return template.text.replace(PLACEHOLDER, (_, field: string) => JSON.stringify(values[field] ?? '').slice(1, -1));
}

const SAMPLE: Notification = {
  event: 'EvacuationBlocked',
  node: 'node-1',
  requestId: 'sample',
  executionId: 'sample',
  blockers: ['pod "a\\"b" is blocked'],
  reason: 'a "reason"',
  time: new Date(0).toISOString(),
};

/** Checks a template: every placeholder known, and a sample renders to JSON. Throws a message for the user. */
function checked(template: WebhookTemplate): WebhookTemplate {
  for (const [, field] of template.text.matchAll(PLACEHOLDER)) {
    if (!(FIELDS as readonly string[]).includes(field ?? '')) {
      throw new Error(`unknown placeholder {{${field}}} (known: ${FIELDS.join(', ')})`);
    }
  }
  try {
    JSON.parse(renderTemplate(template, SAMPLE));
  } catch {
    throw new Error('does not render to JSON (placeholders go inside JSON strings, e.g. {"text":"{{summary}}"})');
  }
  return template;
}

/** `slack`, `json`, `@FILE` (a template file) or an inline template. */
export function presetOrTemplate(text: string): WebhookTemplate {
  const preset = PRESETS[text];
  if (preset !== undefined) return { name: text, text: preset };
  if (text.startsWith('@')) {
    const path = text.slice(1);
    let body: string;
    try {
      body = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(`template file ${path} could not be read (${(error as { code?: string }).code ?? 'error'})`);
    }
    return checked({ name: 'custom', text: body.trim() });
  }
  return checked({ name: 'custom', text });
}
