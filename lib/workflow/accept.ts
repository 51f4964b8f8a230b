/**
 * The first step of both state machines: validate what started the execution and turn it into a
 * MaintenanceRequest. Accepts a bus event (from a rule) or a bare detail (manual `serverless invoke`,
 * `drainbridge evacuate`). Pure: no cluster access, so a refusal changes nothing.
 */
import { z } from 'zod';
import {
  DETAIL_TYPES,
  type DetailType,
  type MaintenanceRequestedEvent,
  parseBusEvent,
  parseDetail,
  toMaintenanceRequest,
} from '../bus/contracts/index.ts';
import { InvalidInput } from '../errors/index.ts';
import type { DrainOptions, MaintenanceRequest } from '../model/request.ts';

/** What may start an Evacuate execution, and what may start a Restore execution. */
const STARTS: Record<'evacuate' | 'restore', readonly DetailType[]> = {
  evacuate: [DETAIL_TYPES.maintenanceRequested, DETAIL_TYPES.nodeCordoned],
  restore: [DETAIL_TYPES.maintenanceEnded, DETAIL_TYPES.nodeUncordoned],
};

/** Input of the accept step: an EventBridge event, or `{ "detail-type", detail }` given by hand. */
export const AcceptInput = z.looseObject({ 'detail-type': z.string().optional(), detail: z.unknown().optional() });

/** A start of either machine as a request; a Maintenance Ended's `unreadableSince` rides along for Restore. */
type Accepted = MaintenanceRequestedEvent & { readonly unreadableSince?: string };

function asRequested(detailType: DetailType, detail: unknown): Accepted {
  const parsed = parseDetail(detailType, detail, 'detail') as Record<string, unknown> & MaintenanceRequestedEvent;
  if (detailType === DETAIL_TYPES.maintenanceRequested) return parsed;
  const origin =
    detailType === DETAIL_TYPES.nodeCordoned || detailType === DETAIL_TYPES.nodeUncordoned ? 'cordon' : parsed.origin;
  const reason = typeof parsed.reason === 'string' ? parsed.reason : `${detailType} (${parsed.requester})`;
  return {
    version: '1',
    requestId: parsed.requestId,
    requester: parsed.requester,
    origin,
    target: parsed.target,
    reason,
    // A notice's source that stayed unreadable ends the request: Restore reports it (unreadable-end.ts).
    ...(typeof parsed.unreadableSince === 'string' ? { unreadableSince: parsed.unreadableSince } : {}),
    // A forwarder's drain flags ride on its Node Cordoned (contracts.ts).
    ...(parsed.drain ? { drain: parsed.drain } : {}),
  };
}

/** Validates the execution's input for `machine` and normalises it. */
export function acceptRequest(
  machine: 'evacuate' | 'restore',
  input: unknown,
  operatorDrain: Partial<DrainOptions>,
): MaintenanceRequest {
  const allowed = STARTS[machine];
  const event = input as { source?: unknown; 'detail-type'?: unknown; detail?: unknown };
  const detailType = event?.['detail-type'];
  if (typeof detailType !== 'string' || !allowed.includes(detailType as DetailType)) {
    throw new InvalidInput(`invalid input to ${machine}`, [
      {
        path: 'detail-type',
        message: `must be one of ${allowed.join(', ')} (${detailType === undefined ? 'none given' : `got ${JSON.stringify(detailType)}`})`,
      },
    ]);
  }
  // A bus event carries its source; a hand-made input may leave it out.
  if (event.source !== undefined) parseBusEvent(input);
  const accepted = asRequested(detailType as DetailType, event.detail);
  const request = toMaintenanceRequest(accepted, operatorDrain);
  return accepted.unreadableSince ? { ...request, unreadableSince: accepted.unreadableSince } : request;
}
