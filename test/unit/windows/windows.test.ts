import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { planAdmission } from '../../../lib/admission/decision.ts';
import { parseDetail } from '../../../lib/bus/contracts/index.ts';
import { ConfigError } from '../../../lib/errors/index.ts';
import { LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { rebootEnds } from '../../../lib/sources/reboot/decide.ts';
import { parseWindows } from '../../../lib/sources/windows/definition.ts';
import { occurrenceOf, windowRequestId, windowRequests } from '../../../lib/sources/windows/occurrence.ts';
import { scheduleEvents } from '../../../lib/sources/windows/serverless.ts';

const WINDOW = {
  name: 'weekly',
  schedule: 'cron(0 2 ? * SUN *)',
  timezone: 'Europe/Berlin',
  durationMinutes: 240,
  nodeSelector: 'pool=workers',
  maxNodes: 1,
  endsOn: 'reboot',
};

function problems(text: string): string[] {
  try {
    parseWindows(text, 'DRAINBRIDGE_MAINTENANCE_WINDOWS');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

describe('maintenance window definitions', () => {
  it('reads a list; timezone defaults to UTC, enabled to true; "" is none', () => {
    const [window] = parseWindows(JSON.stringify([{ ...WINDOW, timezone: undefined }]), 'x');
    assert.equal(window?.timezone, 'UTC');
    assert.equal(window?.enabled, true);
    assert.deepEqual(parseWindows('  ', 'x'), []);
  });

  it('names the window and the field of each mistake, and changes nothing', () => {
    const found = problems(
      JSON.stringify([
        { ...WINDOW, schedule: 'cron(0 25 ? * SUN *)' },
        { ...WINDOW, name: 'Bad_Name', timezone: 'Europe/Atlantis' },
        { ...WINDOW, durationMinutes: 0, endsOn: 'never' },
        { ...WINDOW, nodeSelector: 'a in (' },
        { ...WINDOW, surprise: 1 },
      ]),
    );
    const expect = [
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[0\]\.schedule: hours: "25"/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[1\]\.name: must be lowercase/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[2\]\.durationMinutes: must be at least 1/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[2\]\.endsOn: must be one of reboot, operator/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[1\]\.timezone: "Europe\/Atlantis" is not an IANA time zone/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[3\]\.nodeSelector: is not a label selector/,
      /^DRAINBRIDGE_MAINTENANCE_WINDOWS\[4\]\.surprise: unknown field/,
    ];
    for (const pattern of expect)
      assert.ok(
        found.some((p) => pattern.test(p)),
        `${pattern} in ${found.join('\n')}`,
      );
    assert.match(problems('[{')[0] ?? '', /^DRAINBRIDGE_MAINTENANCE_WINDOWS: must be a JSON list/);
    assert.deepEqual(problems(JSON.stringify([WINDOW, WINDOW])), [
      'DRAINBRIDGE_MAINTENANCE_WINDOWS[1].name: is used twice',
    ]);
  });
});

describe('an occurrence and its requests', () => {
  const [window] = parseWindows(JSON.stringify([WINDOW]), 'x');
  const occurrence = occurrenceOf(window as NonNullable<typeof window>, new Date('2026-11-22T01:00:00Z'));

  it('closes after the duration; request ids name window, opening and node; valid contract events', () => {
    assert.equal(occurrence.closesAt, '2026-11-22T05:00:00.000Z');
    const requests = windowRequests(window as NonNullable<typeof window>, occurrence, ['node-2', 'node-1']);
    assert.deepEqual(
      requests.map((r) => r.requestId),
      ['window:weekly:20261122T0100Z:node-1', 'window:weekly:20261122T0100Z:node-2'],
    );
    for (const request of requests) parseDetail('Maintenance Requested', request);
    assert.equal(requests[0]?.requester, 'maintenance-window/weekly');
    assert.equal(requests[0]?.origin, 'schedule');
    assert.deepEqual(requests[0]?.window, occurrence);
  });

  it('a long node name is hashed to keep the id within 128 characters', () => {
    const id = windowRequestId(occurrence, `${'n'.repeat(120)}.example.com`);
    assert.ok(id.length <= 128);
    assert.match(id, /^window:weekly:20261122T0100Z:[0-9a-f]{16}$/);
  });
});

describe('serverless.yml schedules of the windows', () => {
  it('one EventBridge Scheduler schedule per window, with its time zone and the scheduled time in the input', () => {
    const [event] = scheduleEvents(JSON.stringify([{ ...WINDOW, enabled: false }]), 'prod');
    assert.equal(event?.schedule.method, 'scheduler');
    assert.equal(event?.schedule.timezone, 'Europe/Berlin');
    assert.deepEqual(event?.schedule.rate, ['cron(0 2 ? * SUN *)']);
    assert.equal(event?.schedule.enabled, false);
    assert.equal(event?.schedule.name, 'drainbridge-window-weekly-prod');
    assert.equal(event?.schedule.input.scheduledTime, '<aws.scheduler.scheduled-time>');
    assert.throws(() => scheduleEvents('[{"name":"x"}]', 'prod'), /param maintenanceWindows\[0\]\.schedule/);
  });
});

describe('admission keeps a window to its own slots', () => {
  const base = {
    now: new Date('2026-11-22T01:00:00Z'),
    maxHeldNodes: 3,
    queue: {},
    queueTtlSeconds: 180,
  };
  it('a window with its one slot taken waits, and takes no place in the queue', () => {
    const decision = planAdmission({
      ...base,
      requestId: 'window:weekly:20261122T0100Z:node-2',
      node: 'node-2',
      heldNodes: ['node-1'],
      windowLimit: { window: 'weekly', max: 1, heldNodes: ['node-1'] },
    });
    assert.equal(decision.admit, false);
    assert.match(decision.why, /maintenance window weekly has 1 of its 1 node\(s\) in maintenance \(node-1\)/);
    assert.deepEqual(decision.queue, {});
  });
  it('admitted once its slot is free; other requests are not held back by it', () => {
    const window = planAdmission({
      ...base,
      requestId: 'window:weekly:20261122T0100Z:node-2',
      node: 'node-2',
      heldNodes: ['node-9'],
      windowLimit: { window: 'weekly', max: 1, heldNodes: [] },
    });
    assert.equal(window.admit, true);
    const other = planAdmission({ ...base, requestId: 'aws:node-3:x', node: 'node-3', heldNodes: ['node-1'] });
    assert.equal(other.admit, true);
  });
});

function node(holds: Record<string, unknown>, bootID: string, ready: boolean): V1Node {
  return {
    metadata: { name: 'node-1', annotations: { [LEDGER_ANNOTATION]: JSON.stringify({ holds, released: {} }) } },
    status: {
      nodeInfo: { bootID } as NonNullable<V1Node['status']>['nodeInfo'],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

describe('a reboot ends the maintenance of holds that end on reboot', () => {
  const hold = { requester: 'maintenance-window/weekly', origin: 'schedule', since: '2026-11-22T01:00:00Z' };
  it('boot ID changed and Ready: ended; NotReady, same boot ID, or a hold that does not end on reboot: not', () => {
    const reboots = { 'w:1': { ...hold, bootID: 'a', endsOn: 'reboot' } };
    assert.deepEqual(rebootEnds(node(reboots, 'b', true)), [
      { requestId: 'w:1', origin: 'schedule', bootIdBefore: 'a', bootIdNow: 'b' },
    ]);
    assert.deepEqual(rebootEnds(node(reboots, 'b', false)), [], 'not Ready yet');
    assert.deepEqual(rebootEnds(node(reboots, 'a', true)), [], 'not rebooted');
    assert.deepEqual(rebootEnds(node({ 'op:1': { ...hold, bootID: 'a' } }, 'b', true)), [], 'ends by the operator');
    assert.deepEqual(rebootEnds(node({ 'w:2': { ...hold, endsOn: 'reboot' } }, 'b', true)), [], 'no boot ID recorded');
  });
});
