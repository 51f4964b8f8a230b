/** GCE in the node agent: its metadata loops and values (agent-part/agent-part.ts). */
import type { CloudAgent } from '../agent-part/agent-part.ts';
import { parseJsonText } from '../notice.ts';
import { parseGceMaintenanceEvent, parseGcePreempted, parseGceUpcomingMaintenance } from './parse.ts';
import { gcpSources } from './source.ts';

export const GCP_AGENT: CloudAgent<'gcp'> = {
  provider: 'gcp',
  loops: (context) => gcpSources(context),
  parse: {
    'gcp-maintenance-event': (text, read) => parseGceMaintenanceEvent(text ?? '', read.etag),
    'gcp-upcoming-maintenance': (text) =>
      parseGceUpcomingMaintenance(text === undefined ? undefined : parseJsonText('gcp-upcoming-maintenance', text)),
    'gcp-preempted': (text, read) => parseGcePreempted(text ?? '', read.noticedAt),
  },
};
