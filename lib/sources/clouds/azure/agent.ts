/** Azure in the node agent: its Scheduled Events loop and document (agent-part/agent-part.ts). */
import type { CloudAgent } from '../agent-part/agent-part.ts';
import { parseJsonText } from '../notice.ts';
import { parseAzureScheduledEvents } from './parse.ts';
import { AzureSource } from './source.ts';

export const AZURE_AGENT: CloudAgent<'azure'> = {
  provider: 'azure',
  loops: (context) => [new AzureSource(context)],
  parse: {
    'azure-scheduled-events': (text) =>
      parseAzureScheduledEvents(text === undefined ? undefined : parseJsonText('azure-scheduled-events', text)),
  },
};
