/**
 * The bus adapter for `drainbridge run`'s bus endpoint (bus-endpoint.ts), the node agent's way to it:
 * the EventBridge adapter with the SDK's EventBridge client as on AWS, but sent to DRAINBRIDGE_BUS_ENDPOINT and signed with the shared bus key — never with
 * AWS credentials from the environment, which do not belong to this endpoint.
 */
import { Agent } from 'node:https';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { namedExports } from '../util/named-exports.ts';
import type { BusClientSettings } from './bus-key.ts';
import { readTrustedCa } from './bus-tls.ts';
import { EVENTBRIDGE_CLIENT_DEFAULTS, EventBridgePublisher } from './eventbridge-publisher.ts';

/** The region in the signature's scope: the endpoint is in none, and accepts any. */
export const BUS_ENDPOINT_REGION = 'local';

/**
 * An EventBridge client for run's endpoint, with drainbridge's timeouts and retries. Over https it trusts
 * the certificate of DRAINBRIDGE_BUS_CA (run's own, from its Secret) — and, when that is set, nothing else.
 */
export async function createBusEndpointClient(settings: BusClientSettings): Promise<EventBridgeClient> {
  const { EventBridgeClient } = namedExports(await import('@aws-sdk/client-eventbridge'), 'EventBridgeClient');
  const ca = readTrustedCa(settings.caFile);
  return new EventBridgeClient({
    ...EVENTBRIDGE_CLIENT_DEFAULTS,
    ...(ca
      ? {
          requestHandler: {
            ...EVENTBRIDGE_CLIENT_DEFAULTS.requestHandler,
            httpsAgent: new Agent({ ca, keepAlive: true, minVersion: 'TLSv1.2' }),
          },
        }
      : {}),
    endpoint: settings.endpoint,
    region: BUS_ENDPOINT_REGION,
    credentials: { accessKeyId: settings.key.accessKeyId, secretAccessKey: settings.key.secretAccessKey },
  });
}

/** The bus adapter for run's endpoint: PutEvents to bus `busName` through `createBusEndpointClient`. */
export async function createBusEndpointPublisher(
  settings: BusClientSettings,
  busName: string,
): Promise<EventBridgePublisher> {
  return new EventBridgePublisher(await createBusEndpointClient(settings), busName);
}
