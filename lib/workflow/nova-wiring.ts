/**
 * Builds the Nova port from the configuration: NO_NOVA unless DRAINBRIDGE_NOVA=true, else the Nova
 * module's implementation over credentials from OS_* / OS_CLOUD. (Filled in when lib/nova lands.)
 */
import type { Config } from '../config/index.ts';
import { NO_NOVA, type NovaPort } from './nova-port.ts';

export async function novaPortFor(config: Config): Promise<NovaPort> {
  if (!config.nova.enabled) return NO_NOVA;
  throw new Error('DRAINBRIDGE_NOVA=true, but this build has no Nova branch wired yet');
}
