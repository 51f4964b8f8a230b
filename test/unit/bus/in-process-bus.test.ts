import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { EvacuationFailedEvent, MaintenanceRequestedEvent } from '../../../lib/bus/contracts/index.ts';
import {
  BUS_RECORDS_KEPT,
  type BusClock,
  type BusRuleDefinition,
  type BusScheduleDefinition,
  InProcessBus,
  type InProcessBusOptions,
} from '../../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../../lib/bus/in-process-publisher.ts';
import { PrintingPublisher } from '../../../lib/bus/printing-publisher.ts';
import { parseRate } from '../../../lib/bus/schedules.ts';
import type { BusEvent } from '../../../lib/bus/types.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';

const DEFINITIONS = JSON.parse(readFileSync(new URL('./fixtures/definitions.json', import.meta.url), 'utf8')) as {
  rules: BusRuleDefinition[];
  schedules: BusScheduleDefinition[];
};

const REQUESTED: MaintenanceRequestedEvent = {
  version: '1',
  requestId: 'req-1',
  requester: 'operator',
  origin: 'manual',
  target: { nodeName: 'node-1' },
  reason: 'kernel update',
};

const FAILED: EvacuationFailedEvent = {
  version: '1',
  requestId: 'req-1',
  requester: 'operator',
  target: { nodeName: 'node-1' },
  nodeName: 'node-1',
  phase: 'NodeDraining',
  error: { name: 'DeadlineExceeded', message: 'deadline passed' },
  blockers: [],
};

const entry = (detailType: string, detail: unknown, source = 'drainbridge.requests') => ({
  Source: source,
  DetailType: detailType,
  Detail: JSON.stringify(detail),
  EventBusName: 'drainbridge',
});

/** A clock whose timers run only when the test advances it, in time order. */
class ManualClock implements BusClock {
  time = new Date('2026-11-21T10:00:00.250Z');
  readonly timers = new Map<number, { callback: () => void; at: number }>();
  #id = 0;
  now = () => this.time;
  setTimeout = (callback: () => void, ms: number) => {
    this.#id += 1;
    this.timers.set(this.#id, { callback, at: this.time.getTime() + ms });
    return this.#id;
  };
  clearTimeout = (handle: unknown) => void this.timers.delete(handle as number);
  advance(ms: number): void {
    const until = this.time.getTime() + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = new Date(due[1].at);
      due[1].callback();
    }
    this.time = new Date(until);
  }
}

interface Started {
  stateMachine: string;
  input: unknown;
}

function makeBus(options: Partial<InProcessBusOptions> = {}) {
  const started: Started[] = [];
  const bus = new InProcessBus({
    rules: DEFINITIONS.rules,
    schedules: DEFINITIONS.schedules,
    busName: 'drainbridge',
    busAliases: ['DrainbridgeBus'],
    region: 'eu-west-1',
    start: async (stateMachine, input) => void started.push({ stateMachine, input }),
    ...options,
  });
  return { bus, started };
}

describe('InProcessBus: routing', () => {
  it('answers PutEvents before any target runs, then starts the matching state machine with the full event', async () => {
    const clock = new ManualClock();
    const { bus, started } = makeBus({ clock, newId: () => 'event-1' });
    const output = await bus.putEvents([{ ...entry('Maintenance Requested', REQUESTED), Resources: ['node/node-1'] }]);
    assert.deepEqual(output, { FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] });
    assert.equal(started.length, 0, 'delivery is asynchronous');
    await bus.idle();
    assert.deepEqual(started, [
      {
        stateMachine: 'Evacuate',
        input: {
          version: '0',
          id: 'event-1',
          'detail-type': 'Maintenance Requested',
          source: 'drainbridge.requests',
          account: '000000000000',
          time: '2026-11-21T10:00:00Z',
          region: 'eu-west-1',
          resources: ['node/node-1'],
          detail: REQUESTED,
        },
      },
    ]);
    assert.deepEqual(
      bus.delivered.map((d) => [d.rule, d.copy]),
      [['EvacuateEventRule', 1]],
    );
  });

  it('keeps the newest BUS_RECORDS_KEPT events and deliveries, not every one since it started', async () => {
    const { bus, started } = makeBus();
    const total = 2 * BUS_RECORDS_KEPT + 5;
    for (let n = 0; n < total; n += 10) {
      const batch = Array.from({ length: Math.min(10, total - n) }, (_, i) =>
        entry('Maintenance Requested', { ...REQUESTED, requestId: `req-${n + i}` }),
      );
      await bus.putEvents(batch);
    }
    await bus.idle();
    assert.equal(started.length, total, 'every event was delivered');
    for (const list of [bus.accepted, bus.delivered]) {
      assert.ok(list.length >= BUS_RECORDS_KEPT && list.length < 2 * BUS_RECORDS_KEPT, `${list.length} kept`);
    }
    assert.equal(bus.accepted.at(-1)?.detail.requestId, `req-${total - 1}`, 'the newest is kept');
  });

  it('applies the target input settings of the rule (InputTransformer, InputPath)', async () => {
    const { bus, started } = makeBus();
    await bus.putEvents([entry('Maintenance Ended', { ...REQUESTED, reason: undefined })]);
    await bus.putEvents([entry('Evacuation Failed', FAILED, 'drainbridge.workflow')]);
    await bus.idle();
    assert.deepEqual(
      started.sort((a, b) => a.stateMachine.localeCompare(b.stateMachine)),
      [
        { stateMachine: 'Notify', input: FAILED },
        {
          stateMachine: 'Restore',
          input: { requestId: 'req-1', target: { nodeName: 'node-1' }, rule: 'RestoreEventRule' },
        },
      ],
    );
  });

  it('leaves DISABLED rules, rules on other buses and non-matching events alone, recording the unmatched', async () => {
    const heard: string[] = [];
    const { bus, started } = makeBus({ listener: { unmatched: (event) => heard.push(event['detail-type']) } });
    assert.deepEqual(bus.ruleNames, ['EvacuateEventRule', 'RestoreEventRule', 'NotifyOnFailure']);
    await bus.putEvents([
      entry('Evacuation Failed', { ...FAILED, error: { name: 'NotYetDone', message: 'x' } }, 'drainbridge.workflow'),
    ]);
    await bus.idle();
    assert.equal(started.length, 0);
    assert.equal(bus.unmatched.length, 1);
    assert.equal(bus.unmatched[0]?.['detail-type'], 'Evacuation Failed');
    assert.deepEqual(heard, ['Evacuation Failed']);
  });

  it('refuses bad entries one by one, as PutEvents does, and accepts the rest', async () => {
    const { bus, started } = makeBus();
    const output = await bus.putEvents([
      { ...entry('Maintenance Requested', REQUESTED), Source: undefined },
      { ...entry('Maintenance Requested', REQUESTED), Detail: '[1]' },
      { ...entry('Maintenance Requested', REQUESTED), EventBusName: undefined },
      { ...entry('Maintenance Requested', REQUESTED), Source: 'aws.ec2' },
      { ...entry('Maintenance Requested', REQUESTED), Time: 'not a time' },
      entry('Maintenance Requested', REQUESTED),
    ]);
    assert.equal(output.FailedEntryCount, 5);
    assert.deepEqual(
      output.Entries.map((e) => e.ErrorCode ?? 'accepted'),
      [
        'InvalidArgument',
        'MalformedDetail',
        'ResourceNotFoundException',
        'NotAuthorizedForSourceException',
        'InvalidArgument',
        'accepted',
      ],
    );
    assert.match(output.Entries[2]?.ErrorMessage ?? '', /default.*"drainbridge"/);
    await bus.idle();
    assert.equal(started.length, 1);
    assert.equal(bus.accepted.length, 1);
  });

  it('refuses a call with no entries or more than ten', async () => {
    const { bus } = makeBus();
    await assert.rejects(bus.putEvents([]), InvalidInput);
    await assert.rejects(
      bus.putEvents(Array.from({ length: 11 }, () => entry('Maintenance Requested', REQUESTED))),
      /1 to 10 entries/,
    );
    assert.equal(bus.accepted.length, 0);
  });

  it('takes the event time from the entry when given', async () => {
    const { bus, started } = makeBus();
    await bus.putEvents([{ ...entry('Maintenance Requested', REQUESTED), Time: new Date('2026-01-02T03:04:05.678Z') }]);
    await bus.idle();
    assert.equal((started[0]!.input as { time: string }).time, '2026-01-02T03:04:05Z');
  });
});

describe('InProcessBus: at-least-once and failures', () => {
  it('delivers each event twice with duplicateDeliveries, the same event id both times', async () => {
    const { bus, started } = makeBus({ duplicateDeliveries: true });
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.equal(started.length, 2);
    assert.deepEqual(started[0], started[1]);
    assert.deepEqual(
      bus.delivered.map((d) => d.copy),
      [1, 2],
    );
  });

  it("with duplicateDeliveries 'concurrent' both copies are in flight at once", async () => {
    let inFlight = 0;
    let most = 0;
    const { bus } = makeBus({
      duplicateDeliveries: 'concurrent',
      start: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
      },
    });
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.equal(most, 2);
  });

  it('records a failed start and a target input that is not JSON, without stopping other deliveries', async () => {
    const rules: BusRuleDefinition[] = [
      ...DEFINITIONS.rules,
      {
        name: 'BrokenTemplate',
        eventBusName: 'drainbridge',
        eventPattern: { 'detail-type': ['Maintenance Requested'] },
        target: { stateMachine: 'Text', inputTransformer: { InputTemplate: 'not json <aws.events.rule-name>' } },
      },
    ];
    const started: string[] = [];
    const heard: string[] = [];
    const { bus } = makeBus({
      rules,
      listener: {
        delivered: (d) => heard.push(`delivered ${d.rule}`),
        failed: (f) => heard.push(`failed ${f.rule}`),
      },
      start: async (stateMachine) => {
        started.push(stateMachine);
        throw new Error('ExecutionLimitExceeded');
      },
    });
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.deepEqual(started, ['Evacuate']);
    assert.deepEqual(bus.failed.map((f) => [f.rule, f.error.message.slice(0, 24)]).sort(), [
      ['BrokenTemplate', 'target input is not JSON'],
      ['EvacuateEventRule', 'ExecutionLimitExceeded'],
    ]);
    assert.deepEqual(heard.sort(), [
      'delivered EvacuateEventRule',
      'failed BrokenTemplate',
      'failed EvacuateEventRule',
    ]);
  });

  it('a listener that throws is recorded, not an unhandled rejection', async () => {
    const { bus } = makeBus({
      listener: {
        delivered: () => {
          throw new Error('listener broke');
        },
      },
    });
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.deepEqual(
      bus.failed.map((f) => [f.rule, f.error.message]),
      [['(bus)', 'listener broke']],
    );
  });

  it('idle() waits for events that deliveries themselves publish', async () => {
    const order: string[] = [];
    const holder: { bus?: InProcessBus } = {};
    const { bus } = makeBus({
      start: async (stateMachine) => {
        order.push(stateMachine);
        if (stateMachine === 'Evacuate') {
          await new InProcessPublisher(holder.bus as InProcessBus).publish('Evacuation Failed', FAILED);
        }
      },
    });
    holder.bus = bus;
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.deepEqual(order, ['Evacuate', 'Notify']);
  });
});

describe('InProcessPublisher', () => {
  it('puts a validated event with its contract source on the bus', async () => {
    const { bus, started } = makeBus();
    await new InProcessPublisher(bus).publish('Evacuation Failed', FAILED);
    await bus.idle();
    assert.equal(bus.accepted[0]?.source, 'drainbridge.workflow');
    assert.deepEqual(started, [{ stateMachine: 'Notify', input: FAILED }]);
  });

  it('refuses an invalid detail naming the field, and puts nothing on the bus', async () => {
    const { bus } = makeBus();
    const bad = { ...FAILED, phase: 'Sleeping' } as unknown as EvacuationFailedEvent;
    await assert.rejects(new InProcessPublisher(bus).publish('Evacuation Failed', bad), (error: unknown) => {
      assert.ok(error instanceof InvalidInput);
      assert.equal(error.problems[0]?.path, 'detail.phase');
      return true;
    });
    assert.equal(bus.accepted.length, 0);
  });
});

describe('InProcessBus: definitions are validated up front', () => {
  it('names the rule and the pattern part that is wrong', () => {
    const rules: BusRuleDefinition[] = [
      DEFINITIONS.rules[0] as BusRuleDefinition,
      { name: 'Bad', eventPattern: { detail: { n: [{ numeric: ['>', 'x'] }] } }, target: { stateMachine: 'X' } },
    ];
    assert.throws(
      () => makeBus({ rules }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidInput);
        assert.match(error.message, /invalid rule "Bad"/);
        assert.equal(error.problems[0]?.path, 'rules[1].eventPattern.detail.n[0].numeric');
        return true;
      },
    );
  });

  it('names a bad target input and a rule without a state machine', () => {
    const base = { name: 'R', eventPattern: { source: ['x'] } };
    assert.throws(
      () => makeBus({ rules: [{ ...base, target: { stateMachine: 'X', input: '{' } }] }),
      /rules\[0\]\.target\.input: must be valid JSON/,
    );
    assert.throws(
      () => makeBus({ rules: [{ ...base, target: { stateMachine: '' } }] }),
      /rules\[0\]\.target\.stateMachine/,
    );
  });

  it('recognises its bus through CloudFormation references to the logical id', async () => {
    const rule = (name: string, eventBusName: BusRuleDefinition['eventBusName']): BusRuleDefinition => ({
      name,
      eventBusName,
      eventPattern: { source: ['drainbridge.requests'] },
      target: { stateMachine: name },
    });
    const { bus, started } = makeBus({
      rules: [
        rule('GetAtt', { 'Fn::GetAtt': ['DrainbridgeBus', 'Name'] }),
        rule('GetAttText', { 'Fn::GetAtt': 'DrainbridgeBus.Name' }),
        rule('Ref', { Ref: 'DrainbridgeBus' }),
        rule('OtherRef', { Ref: 'OtherBus' }),
        rule('Default', undefined),
      ],
    });
    assert.deepEqual(bus.ruleNames, ['GetAtt', 'GetAttText', 'Ref']);
    await bus.putEvents([entry('Maintenance Requested', REQUESTED)]);
    await bus.idle();
    assert.deepEqual(started.map((s) => s.stateMachine).sort(), ['GetAtt', 'GetAttText', 'Ref']);
    assert.throws(
      () => makeBus({ rules: [rule('Bad', { 'Fn::Sub': 'x' })] }),
      /rules\[0\]\.eventBusName: must be a bus name/,
    );
  });

  it('validates DISABLED rules and rules on other buses too', () => {
    const rules: BusRuleDefinition[] = [
      {
        name: 'Off',
        state: 'DISABLED',
        eventBusName: 'elsewhere',
        eventPattern: { source: [] },
        target: { stateMachine: 'X' },
      },
    ];
    assert.throws(() => makeBus({ rules }), /rules\[0\]\.eventPattern\.source/);
  });
});

describe('InProcessBus: schedules', () => {
  it('runs rate and cron schedules on the clock until stopped, and skips DISABLED ones', async () => {
    const clock = new ManualClock();
    const startedAt: string[] = [];
    const { bus } = makeBus({
      clock,
      start: async (stateMachine, input) =>
        void startedAt.push(`${stateMachine} ${clock.now().toISOString()} ${JSON.stringify(input)}`),
    });
    assert.deepEqual(bus.scheduleNames, ['SweepSchedule', 'NightlySchedule']);
    bus.startSchedules();
    bus.startSchedules();
    clock.advance(4 * 60_000);
    assert.equal(startedAt.length, 0);
    clock.advance(24 * 3_600_000);
    await bus.idle();
    const sweeps = startedAt.filter((line) => line.includes('{"sweep":true}'));
    assert.equal(sweeps.length, 288, 'every 5 minutes over 24 h 4 min');
    assert.equal(sweeps[0], 'Sweep 2026-11-21T10:05:00.250Z {"sweep":true}');
    assert.deepEqual(
      startedAt.filter((line) => line.endsWith('{}')),
      ['Sweep 2026-11-22T02:00:00.000Z {}'],
    );
    bus.stop();
    assert.equal(clock.timers.size, 0);
    const before = startedAt.length;
    clock.advance(7 * 24 * 3_600_000);
    await bus.idle();
    assert.equal(startedAt.length, before);
  });

  it('fires a schedule on demand and refuses an unknown one', async () => {
    const { bus, started } = makeBus();
    await bus.fireSchedule('SweepSchedule');
    assert.equal(started.length, 1);
    await assert.rejects(bus.fireSchedule('OffSchedule'), /no enabled schedule "OffSchedule"/);
  });

  it('parses rate expressions as EventBridge writes them and names a bad schedule', () => {
    assert.equal(parseRate('rate(1 minute)'), 60_000);
    assert.equal(parseRate('rate(5 minutes)'), 300_000);
    assert.equal(parseRate('rate(2 hours)'), 7_200_000);
    assert.equal(parseRate('rate(1 day)'), 86_400_000);
    assert.throws(() => parseRate('rate(1 minutes)'), /use "1 minute"/);
    assert.throws(() => parseRate('rate(5 minute)'), /use "5 minutes"/);
    assert.throws(() => parseRate('rate(0 minutes)'), /positive/);
    assert.throws(() => parseRate('every 5 minutes'), /is not rate/);
    const schedules: BusScheduleDefinition[] = [
      { name: 'S', scheduleExpression: 'rate(5 weeks)', state: 'DISABLED', target: { stateMachine: 'X' } },
    ];
    assert.throws(() => makeBus({ schedules }), /schedules\[0\]\.scheduleExpression/);
    const badCron: BusScheduleDefinition[] = [
      { name: 'C', scheduleExpression: 'cron(0 2 * * * *)', target: { stateMachine: 'X' } },
    ];
    assert.throws(() => makeBus({ schedules: badCron }), /exactly one of day-of-month and day-of-week/);
  });
});

// The bus adapter where there is no bus: its batch half (`send`, shared by every adapter through
// send-batch.ts) prints each valid entry and refuses an invalid event alone, in order.
describe('PrintingPublisher', () => {
  it('sends a batch: each valid event printed as its PutEvents entry, an invalid one refused alone', async () => {
    const lines: string[] = [];
    const adapter = new PrintingPublisher('drainbridge', (line) => lines.push(line));
    const bad = { ...FAILED, nodeName: '' } as EvacuationFailedEvent;
    const events: BusEvent[] = [
      { detailType: 'Evacuation Failed', detail: FAILED },
      { detailType: 'Evacuation Failed', detail: bad },
      { detailType: 'Evacuation Failed', detail: { ...FAILED, requestId: 'req-2' } },
    ];

    const outcomes = await adapter.send(events);

    assert.deepEqual(
      outcomes.map((outcome) => outcome.ok),
      [true, false, true],
    );
    const refused = outcomes[1];
    assert.ok(refused && !refused.ok && refused.error instanceof InvalidInput);
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).putEventsEntry.EventBusName),
      ['drainbridge', 'drainbridge'],
    );
    assert.deepEqual(
      lines.map((line) => JSON.parse(JSON.parse(line).putEventsEntry.Detail).requestId),
      ['req-1', 'req-2'],
    );
    assert.equal(adapter.fits(events), true);
  });
});
