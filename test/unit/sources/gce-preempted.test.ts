/**
 * parseGcePreempted (lib/sources/clouds/gcp/parse.ts): GCE's `instance/preempted` value as "Create and use
 * preemptible VMs" documents it (https://cloud.google.com/compute/docs/instances/create-use-preemptible,
 * "Detecting if a VM was preempted"): `FALSE`, or `TRUE` from the preemption notice; the VM stops 30 s later.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GCE_PREEMPTION_SECONDS, parseGcePreempted } from '../../../lib/sources/clouds/gcp/parse.ts';
import { NoticeParseError } from '../../../lib/sources/clouds/notice.ts';
import { DEFAULT_NOTICE_POLICY } from '../../../lib/sources/clouds/policy.ts';

const NOTICED = new Date('2030-01-10T12:00:00.000Z');

describe('parseGcePreempted', () => {
  it('FALSE: no notice (a documented empty answer)', () => {
    assert.deepEqual(parseGcePreempted('FALSE', NOTICED), { notices: [], rejected: [] });
  });

  it('TRUE: one notice from when it was first read, stopping 30 s later', () => {
    const [notice] = parseGcePreempted('TRUE\n', NOTICED).notices;
    assert.equal(GCE_PREEMPTION_SECONDS, 30);
    assert.equal(notice?.eventId, 'preempted-2030-01-10T12:00:00.000Z');
    assert.equal(notice?.notBefore, '2030-01-10T12:00:30.000Z');
    assert.equal(notice?.status, 'started');
    assert.equal(notice?.policyKey, 'preempted');
    assert.equal(
      DEFAULT_NOTICE_POLICY.gcp.preempted.timing,
      'deadline',
      'the request starts at once, the stop is its deadline',
    );
  });

  it('anything else is unreadable, naming what it got', () => {
    assert.throws(
      () => parseGcePreempted('yes', NOTICED),
      (error) => error instanceof NoticeParseError && /must be one of FALSE, TRUE \(got "yes"\)/.test(error.message),
    );
  });
});
