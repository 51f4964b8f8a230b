/**
 * The Prometheus alerts gate, as kured's: the alerts Prometheus's rules hold (`/api/v1/alerts`; pending
 * ones too unless `firingOnly`), filtered by name (`alertFilterRegexp` ignores the names it matches, or with
 * `alertFilterMatchOnly` counts only those) and by label matchers; any alert left blocks admission.
 * Prometheus, not Alertmanager: an alert silenced in Alertmanager still blocks, as it does kured's reboots
 * — a silence hides a page, it does not make the fleet healthy (docs/safety.md). The alertmanager gate
 * (alertmanager.ts) is the one that honours silences.
 */

import type { GateSpecOf } from '../../model/gate-spec.ts';
import { describeAlert, matchesLabels } from '../../model/label-matchers.ts';
import { blocked, type Gate, open } from './gate.ts';
import { type PrometheusAlert, readAlerts } from './prometheus-api.ts';

type AlertsSpec = GateSpecOf<'prometheus-alerts'>;

/** The alerts that block: pure, the filter kured applies plus the matchers. */
export function blockingAlerts(
  alerts: readonly PrometheusAlert[],
  spec: Omit<AlertsSpec, 'kind' | 'url'>,
): PrometheusAlert[] {
  const filter = spec.alertFilterRegexp === undefined ? undefined : new RegExp(spec.alertFilterRegexp);
  return alerts.filter((alert) => {
    if (alert.state === 'inactive') return false;
    if (spec.firingOnly === true && alert.state !== 'firing') return false;
    if (filter) {
      const named = filter.test(alert.labels.alertname ?? '');
      if (named !== (spec.alertFilterMatchOnly === true)) return false;
    }
    return (spec.matchers ?? []).every((matcher) => matchesLabels(matcher, alert.labels));
  });
}

/** `blocked by alert KubeNodeNotReady{node="node-7"}` (and how many more). */
export function describeBlocking(alerts: readonly PrometheusAlert[]): string {
  const [first, ...rest] = alerts;
  const more = rest.length > 0 ? ` and ${rest.length} more alert(s)` : '';
  const pending = first?.state === 'pending' ? ' (pending)' : '';
  return `blocked by alert ${describeAlert(first?.labels ?? {})}${pending}${more}`;
}

export function alertsGate(spec: AlertsSpec, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ signal }) {
      const alerts = blockingAlerts(await readAlerts(spec.url, signal), spec);
      return alerts.length === 0 ? open('no matching alert') : blocked(describeBlocking(alerts));
    },
  };
}
