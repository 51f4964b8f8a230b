/**
 * The PromQL gate: an instant query that must come back empty or all zero (an error-budget burn above its
 * threshold, a quorum short of members). A sample other than 0 blocks, naming it; a range vector or a
 * string is a configuration mistake and blocks too, saying so.
 */

import type { GateSpecOf } from '../../model/gate-spec.ts';
import { describeAlert } from '../../model/label-matchers.ts';
import { blocked, type Gate, type GateVerdict, open } from './gate.ts';
import { type QueryResult, queryInstant } from './prometheus-api.ts';

type PromqlSpec = GateSpecOf<'promql'>;

/** The verdict on a query's result (pure). */
export function promqlVerdict(expr: string, result: QueryResult): GateVerdict {
  if (result.resultType === 'scalar') {
    const value = Number(result.result[1]);
    return value === 0 ? open(`${expr} = 0`) : blocked(`${expr} = ${result.result[1]} (must be 0 or empty)`);
  }
  if (result.resultType !== 'vector') {
    return blocked(`${expr} returned a ${result.resultType}, not an instant vector or scalar (fails closed)`);
  }
  const nonZero = result.result.filter((sample) => Number(sample.value[1]) !== 0);
  if (nonZero.length === 0) {
    return open(result.result.length === 0 ? `${expr} is empty` : `${expr} is 0`);
  }
  const [first] = nonZero;
  const { __name__: metricName = '', ...labels } = first?.metric ?? {};
  const series = describeAlert({ ...labels, alertname: metricName });
  const more = nonZero.length > 1 ? ` and ${nonZero.length - 1} more series` : '';
  const which = series ? ` for ${series}` : '';
  return blocked(`${expr} returned ${first?.value[1]}${which}${more} (must be 0 or empty)`);
}

export function promqlGate(spec: PromqlSpec, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ signal }) {
      return promqlVerdict(spec.expr, await queryInstant(spec.url, spec.expr, signal));
    },
  };
}
