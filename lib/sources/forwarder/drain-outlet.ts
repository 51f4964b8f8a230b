/**
 * The drain options a forwarder was started with (`drainbridge forwarder --ignore-daemonsets …`), laid on
 * the events that start an evacuation. The evacuation runs in another process (Lambda, `drainbridge run`),
 * which reads only the event, so the options travel in it. They win over a source's own (a
 * NodeMaintenance's node-maintenance-operator options): the operator typed them. Pure.
 */

import type { DetailByType } from '../../bus/contracts/contracts.ts';
import type { DrainOptions } from '../../model/request.ts';
import type { EventOutlet, ForwardedEvent } from '../types.ts';

type Starting = DetailByType['Node Cordoned' | 'Maintenance Requested'];

/** `event` with `drain` laid over its own drain options, when it starts an evacuation. */
export function withDrainOptions(event: ForwardedEvent, drain: Partial<DrainOptions>): ForwardedEvent {
  if (event.detailType !== 'Node Cordoned' && event.detailType !== 'Maintenance Requested') return event;
  const detail = event.detail as Starting;
  return { ...event, detail: { ...detail, drain: { ...detail.drain, ...drain } } } as ForwardedEvent;
}

/** An outlet that lays `drain` on what it passes on (the outlet itself when `drain` sets nothing). */
export function drainOptionsOutlet(outlet: EventOutlet, drain: Partial<DrainOptions>): EventOutlet {
  if (Object.keys(drain).length === 0) return outlet;
  return { offer: (event) => outlet.offer(withDrainOptions(event, drain)) };
}
