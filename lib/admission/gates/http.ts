/**
 * The HTTP gate, for a team's own checks: a GET of the URL answering 200 lets admission go on; any other
 * status, or no answer within the timeout, blocks. The URL is shown without its query or credentials (a
 * token may ride there).
 */

import type { GateSpecOf } from '../../model/gate-spec.ts';
import { blocked, type Gate, open } from './gate.ts';

/** The URL as shown in a reason: scheme, host and path only. */
export function shownUrl(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

export function httpGate(spec: GateSpecOf<'http'>, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ signal }) {
      const response = await fetch(spec.url, { signal, redirect: 'manual' });
      // The body is not read beyond a line: a check's page may be large, and its text is only a hint.
      const hint = response.ok ? '' : (await response.text()).slice(0, 120).replace(/\s+/g, ' ').trim();
      if (response.status === 200) return open(`${shownUrl(spec.url)} answered 200`);
      return blocked(`${shownUrl(spec.url)} answered ${response.status}${hint ? `: ${hint}` : ''} (200 lets through)`);
    },
  };
}
