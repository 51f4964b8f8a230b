/** AWS in the node agent: its IMDS loops and documents (agent-part/agent-part.ts). */
import type { CloudAgent } from '../agent-part/agent-part.ts';
import { parseJsonText } from '../notice.ts';
import { parseEc2ScheduledEvents, parseRebalanceRecommendation, parseSpotInstanceAction } from './parse.ts';
import { awsSources } from './source.ts';

const json = (source: Parameters<typeof parseJsonText>[0], text: string | undefined): unknown =>
  text === undefined ? undefined : parseJsonText(source, text);

export const AWS_AGENT: CloudAgent<'aws'> = {
  provider: 'aws',
  loops: (context) => awsSources(context),
  parse: {
    'aws-scheduled-events': (text) => parseEc2ScheduledEvents(json('aws-scheduled-events', text) ?? []),
    'aws-spot-instance-action': (text) => parseSpotInstanceAction(json('aws-spot-instance-action', text)),
    'aws-rebalance-recommendation': (text) => parseRebalanceRecommendation(json('aws-rebalance-recommendation', text)),
    'aws-health': null,
    'aws-spot-interruption-warning': null,
  },
};
