/** The notice policy as `drainbridge plan --notice-policy` prints it. Pure. */
import { ORIGIN_DRAIN_DEFAULTS } from '../../model/drain-defaults.ts';
import type { PolicyRow } from './policy.ts';

/** The options the rule sets over its origin's defaults (DRAINBRIDGE_DRAIN_* may still change the latter). */
function drainText(row: PolicyRow): string {
  const drain = { ...ORIGIN_DRAIN_DEFAULTS[row.provider].drain, ...row.drain };
  const set = Object.entries(drain).map(([key, value]) => `${key}=${String(value)}`);
  return set.length > 0 ? set.join(', ') : "kubectl's defaults";
}

/** One line per provider and notice type: what happens, when it starts, approval, drain options, why. */
export function renderPolicyText(rows: readonly PolicyRow[]): string {
  const lines = rows.map((row) => {
    const timing =
      row.action === 'ignore'
        ? ''
        : row.timing === 'not-before'
          ? " (starts in time for the notice's start)"
          : ' (starts at once)';
    const approve = row.approveWhenDrained ? '; approves the event once drained' : '';
    return `  ${row.provider} ${row.type}: ${row.action}${timing}${approve}; drain ${drainText(row)} — ${row.why}`;
  });
  return ['Notice policy (DRAINBRIDGE_NOTICE_POLICY overrides the defaults):', ...lines].join('\n');
}
