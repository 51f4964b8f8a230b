/**
 * The clouds' node-agent parts (lib/sources/clouds/<cloud>/agent.ts): which loops run and how each
 * metadata document parses, keyed by provider. Kept apart from descriptors.ts, whose data the policy and
 * the settings read without loading any client. Adding a cloud is one entry here (docs/development.md).
 */
import type { NoticeProvider } from '../../../model/notice.ts';
import type { CloudAgent } from '../agent-part/agent-part.ts';
import { ALIBABA_AGENT } from '../alibaba/agent.ts';
import { AWS_AGENT } from '../aws/agent.ts';
import { AZURE_AGENT } from '../azure/agent.ts';
import { GCP_AGENT } from '../gcp/agent.ts';

/** One agent part per provider: a provider without one does not compile. */
export const CLOUD_AGENTS = Object.freeze({
  azure: AZURE_AGENT,
  aws: AWS_AGENT,
  gcp: GCP_AGENT,
  alibaba: ALIBABA_AGENT,
}) satisfies {
  readonly [P in NoticeProvider]: CloudAgent<P>;
};
