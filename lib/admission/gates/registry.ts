/**
 * The gates by kind: one line per kind, its module builds the gate from its validated configuration
 * (spec.ts). Adding a kind touches its module, its schema and this table.
 */

import { DEFAULT_GATE_TIMEOUT_SECONDS, type GateKind, type GateSpec, type GateSpecOf } from '../../model/gate-spec.ts';
import { alertmanagerGate } from './alertmanager.ts';
import { alertsGate } from './alerts.ts';
import { failureDomainGate, notReadyGate, pdbGate } from './cluster.ts';
import type { Gate } from './gate.ts';
import { httpGate } from './http.ts';
import { promqlGate } from './promql.ts';

const BUILDERS: { readonly [K in GateKind]: (spec: GateSpecOf<K>, timeoutSeconds: number) => Gate } = {
  'prometheus-alerts': alertsGate,
  alertmanager: alertmanagerGate,
  promql: promqlGate,
  'not-ready-nodes': notReadyGate,
  'pdbs-at-zero': pdbGate,
  'failure-domain': failureDomainGate,
  http: httpGate,
};

function gateOf<K extends GateKind>(spec: GateSpecOf<K>): Gate {
  const build = BUILDERS[spec.kind] as (spec: GateSpecOf<K>, timeoutSeconds: number) => Gate;
  return build(spec, spec.timeout ?? DEFAULT_GATE_TIMEOUT_SECONDS);
}

/** The configured gates, in order. */
export function gatesOf(specs: readonly GateSpec[]): Gate[] {
  return specs.map((spec) => gateOf(spec));
}
