/**
 * The Alertmanager gate: the alerts Alertmanager holds active and would notify about — silenced and
 * inhibited ones left out by Alertmanager itself — through the same name filter (`alertFilterRegexp`,
 * `alertFilterMatchOnly`) and label matchers as the prometheus-alerts gate; any alert left blocks admission.
 * Unlike that gate, a silence lets admission go on: what a team that acknowledges a known alert with a
 * silence expects (docs/safety.md).
 */

import type { GateSpecOf } from '../../model/gate-spec.ts';
import { readUnsilencedAlerts } from './alertmanager-api.ts';
import { blockingAlerts, describeBlocking } from './alerts.ts';
import { blocked, type Gate, open } from './gate.ts';

export function alertmanagerGate(spec: GateSpecOf<'alertmanager'>, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ signal }) {
      const alerts = blockingAlerts(await readUnsilencedAlerts(spec.url, signal), spec);
      return alerts.length === 0 ? open('no matching unsilenced alert') : blocked(describeBlocking(alerts));
    },
  };
}
