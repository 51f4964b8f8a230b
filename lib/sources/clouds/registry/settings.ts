/**
 * The node agent's settings, declared once (lib/settings/setting.ts): its variable, parser, default, help
 * and flag. Kept apart from the loader (config.ts) so the CLI reads the flags without loading the policy.
 */
import { z } from 'zod';
import { NodeName } from '../../../bus/contracts/fields.ts';
import { NOTICE_PROVIDERS, type NoticeProvider } from '../../../model/notice.ts';
import { wholeNumber } from '../../../settings/parsers.ts';
import { type SettingReader, setting } from '../../../settings/setting.ts';
import { CLOUDS } from './descriptors.ts';

const AGENT: readonly SettingReader[] = ['node-agent'];

/** Each cloud's own settings, from its descriptor: AGENT_SETTINGS.<provider>. */
const CLOUD_SETTINGS = Object.fromEntries(Object.values(CLOUDS).map((cloud) => [cloud.provider, cloud.settings])) as {
  readonly [P in NoticeProvider]: (typeof CLOUDS)[P]['settings'];
};

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
    help: 'JSON overrides of the notice policy (lib/sources/clouds/README.md)',
    readBy: AGENT,
  }),
  ...CLOUD_SETTINGS,
};
