/** Alibaba Cloud ECS in the node agent: its metadata loop and document (agent-part/agent-part.ts). */
import type { CloudAgent } from '../agent-part/agent-part.ts';
import { parseJsonText } from '../notice.ts';
import { parseEcsSystemEvents } from './parse.ts';
import { alibabaSources } from './source.ts';

export const ALIBABA_AGENT: CloudAgent<'alibaba'> = {
  provider: 'alibaba',
  loops: (context) => alibabaSources(context),
  parse: {
    'alibaba-system-events': (text) =>
      parseEcsSystemEvents(text === undefined ? undefined : parseJsonText('alibaba-system-events', text)),
  },
};
