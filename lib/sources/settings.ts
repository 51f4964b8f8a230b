/**
 * The node agent's settings, declared once (lib/settings/setting.ts): its variable, parser, default, help
 * and flag. Kept apart from the loader (config.ts) so the CLI reads the flags without loading the policy.
 */
import { z } from 'zod';
import { NOTICE_PROVIDERS } from '../domain/notice.ts';
import { NodeName } from '../events/fields.ts';
import { bool, wholeNumber } from '../settings/parsers.ts';
import { type SettingReader, setting } from '../settings/setting.ts';

const AGENT: readonly SettingReader[] = ['node-agent'];

const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((url) => url.replace(/\/+$/, ''));

/** Every setting of the node agent (`drainbridge forwarder --node-agent`), grouped as AgentConfig is. */
export const AGENT_SETTINGS = {
  /** This node's name (the downward API's `spec.nodeName`). */
  nodeName: setting({
    env: 'DRAINBRIDGE_NODE_NAME',
    parse: NodeName,
    default: undefined,
    help: 'this node (downward API `spec.nodeName`); required',
    readBy: AGENT,
    flag: { name: 'node', value: 'NAME', commands: ['forwarder'] },
  }),
  /** Whose metadata service this node has. */
  provider: setting({
    env: 'DRAINBRIDGE_AGENT_PROVIDER',
    parse: z.enum(NOTICE_PROVIDERS, { error: `must be one of ${NOTICE_PROVIDERS.join(', ')}` }),
    default: undefined,
    help: `whose metadata service: ${NOTICE_PROVIDERS.join(', ')}`,
    readBy: AGENT,
    flag: { name: 'provider', value: NOTICE_PROVIDERS.join('|'), commands: ['forwarder'] },
  }),
  /** Seconds between two reads of a polled document. */
  pollSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_POLL_SECONDS',
    parse: wholeNumber(1, 300),
    default: '2',
    help: 'seconds between reads of a polled document',
    readBy: AGENT,
  }),
  /** Per-call timeout of a metadata request (ms); GCE's hanging requests get their wait on top. */
  timeoutMs: setting({
    env: 'DRAINBRIDGE_AGENT_TIMEOUT_MS',
    parse: wholeNumber(100, 60_000),
    default: '2000',
    help: 'timeout of one metadata request (ms)',
    readBy: AGENT,
  }),
  /**
   * How long a source may stay unreadable before a request from a notice without an end (NotAfter) is
   * ended; a notice with an end is ended once that has passed. 0: never end on an unreadable source.
   */
  unreadableLimitSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_UNREADABLE_LIMIT_SECONDS',
    parse: wholeNumber(0, 2_592_000),
    default: '3600',
    help: 'seconds a notice source may stay unreadable before a request from a notice without an end is ended (one with an end: once it passed); 0: never',
    readBy: AGENT,
  }),
  /** The overrides' text; the loader merges it into the default policy (config.ts: parseNoticePolicy). */
  policy: setting({
    env: 'DRAINBRIDGE_NOTICE_POLICY',
    parse: z.string(),
    default: '',
    help: 'JSON overrides of the notice policy (lib/sources/README.md)',
    readBy: AGENT,
  }),
  azure: {
    baseUrl: setting({
      env: 'DRAINBRIDGE_AGENT_AZURE_URL',
      parse: baseUrl,
      default: 'http://169.254.169.254',
      help: 'Azure IMDS base URL',
      readBy: AGENT,
    }),
    apiVersion: setting({
      env: 'DRAINBRIDGE_AGENT_AZURE_API_VERSION',
      parse: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be an api-version such as 2020-07-01'),
      default: '2020-07-01',
      help: 'Scheduled Events api-version',
      readBy: AGENT,
    }),
    /** Seconds between two checks whether an event may be approved (they read the cluster). */
    approvalCheckSeconds: setting({
      env: 'DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS',
      parse: wholeNumber(1, 300),
      default: '5',
      help: 'seconds between checks whether an event may be approved',
      readBy: AGENT,
    }),
  },
  aws: {
    baseUrl: setting({
      env: 'DRAINBRIDGE_AGENT_AWS_URL',
      parse: baseUrl,
      default: 'http://169.254.169.254',
      help: 'EC2 IMDS base URL',
      readBy: AGENT,
    }),
    tokenTtlSeconds: setting({
      env: 'DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS',
      parse: wholeNumber(1, 21_600),
      default: '3600',
      help: 'IMDSv2 session token lifetime (1–21600)',
      readBy: AGENT,
    }),
    /** Read the spot `instance-action` notice (opt-in). */
    spot: setting({
      env: 'DRAINBRIDGE_AGENT_AWS_SPOT',
      parse: bool,
      default: 'false',
      help: 'read the spot instance-action notice',
      readBy: AGENT,
    }),
    /** Read the rebalance recommendation (opt-in). */
    rebalance: setting({
      env: 'DRAINBRIDGE_AGENT_AWS_REBALANCE',
      parse: bool,
      default: 'false',
      help: 'read the rebalance recommendation',
      readBy: AGENT,
    }),
  },
  gcp: {
    baseUrl: setting({
      env: 'DRAINBRIDGE_AGENT_GCP_URL',
      parse: baseUrl,
      default: 'http://metadata.google.internal',
      help: 'GCE metadata server base URL',
      readBy: AGENT,
    }),
    /** `timeout_sec` of the hanging maintenance-event request. */
    waitSeconds: setting({
      env: 'DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS',
      parse: wholeNumber(1, 3600),
      default: '60',
      help: '`timeout_sec` of the hanging maintenance-event read',
      readBy: AGENT,
    }),
    /** Read `upcoming-maintenance` too. */
    upcoming: setting({
      env: 'DRAINBRIDGE_AGENT_GCP_UPCOMING',
      parse: bool,
      default: 'true',
      help: 'read the upcoming-maintenance document too',
      readBy: AGENT,
    }),
    /** Read `preempted` (Spot and preemptible VMs; opt-in, as AWS spot is). */
    preempted: setting({
      env: 'DRAINBRIDGE_AGENT_GCP_PREEMPTED',
      parse: bool,
      default: 'false',
      help: 'read the preempted value (Spot and preemptible VMs: 30 s from the notice to the stop)',
      readBy: AGENT,
    }),
    upcomingPollSeconds: setting({
      env: 'DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS',
      parse: wholeNumber(5, 86_400),
      default: '60',
      help: 'seconds between reads of upcoming-maintenance',
      readBy: AGENT,
    }),
  },
};
