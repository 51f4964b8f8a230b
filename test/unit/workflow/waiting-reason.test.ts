/**
 * A request's record says when a wait for the slots was decided: far back in line its later attempts are
 * told from the Lease alone and do not rewrite it, so the count of requests ahead and the holders it names
 * would otherwise read as current (issue 22). A limit, a gate or a paused admission is said as it is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { saidAsOf, withoutAsOf } from '../../../lib/workflow/waiting-reason.ts';

const AT = new Date('2026-11-28T09:02:00.000Z');

describe('the waiting reason an Evacuation record keeps', () => {
  it('a wait for the slots says when it was decided; the same reason later compares equal, a new count does not', () => {
    const line = 'all 2 maintenance slot(s) are in use (node-1 by r-1, node-2 by r-2); 7 request(s) ahead';
    const said = saidAsOf(line, AT);
    assert.equal(said, `as of 2026-11-28T09:02:00.000Z: ${line}`);
    assert.equal(withoutAsOf(said), line, 'not rewritten for the same reason');
    assert.notEqual(withoutAsOf(said), line.replace('7 request', '3 request'), 'rewritten once the line moved');
    assert.match(
      saidAsOf('waiting behind 4 older request(s) for 1 free slot(s)', AT),
      /^as of 2026-11-28T09:02:00\.000Z: waiting behind 4/,
    );
  });

  it('limits, gates and a paused admission are said as they are (decided again at each retry)', () => {
    for (const why of [
      'health gate prometheus-alerts: blocked by alert NodeUnhealthy{node="node-2"}',
      'topology.kubernetes.io/zone=zone-a already has 1 node(s) in maintenance (node-1)',
      'admission is paused by the circuit breaker since 2026-11-28T09:00:00.000Z: 2 evacuations failed',
    ]) {
      assert.equal(saidAsOf(why, AT), why);
      assert.equal(withoutAsOf(why), why);
    }
    assert.equal(withoutAsOf(undefined), undefined);
  });
});
