import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type BusRuleDefinition, type BusScheduleDefinition, InProcessBus } from '../../../lib/bus/in-process-bus.ts';
import { busReferenceName } from '../../../lib/bus/rules.ts';

/** Written by scripts/extract-definitions.ts from `serverless package`'s template. */
const DEFINITIONS = new URL('../../../state-machines/definitions.json', import.meta.url);
const missing = !existsSync(DEFINITIONS) && 'state-machines/definitions.json has not been generated';

describe('the packaged rules on the in-process bus', () => {
  it('compile, and route requests to Evacuate and Restore', { skip: missing }, async () => {
    const { rules, schedules } = JSON.parse(readFileSync(DEFINITIONS, 'utf8')) as {
      rules: BusRuleDefinition[];
      schedules?: BusScheduleDefinition[];
    };
    const names = [...new Set(rules.map((rule) => busReferenceName(rule.eventBusName) ?? 'default'))];
    const started: string[] = [];
    const bus = new InProcessBus({
      rules,
      schedules: schedules ?? [],
      busName: 'drainbridge',
      busAliases: names,
      start: async (stateMachine) => void started.push(stateMachine),
    });
    const detail = {
      version: '1',
      requestId: 'req-1',
      requester: 'test',
      origin: 'manual',
      target: { nodeName: 'node-1' },
      reason: 'test',
    };
    const put = (DetailType: string) =>
      bus.putEvents([
        { Source: 'drainbridge.requests', DetailType, Detail: JSON.stringify(detail), EventBusName: 'drainbridge' },
      ]);
    await put('Maintenance Requested');
    await bus.idle();
    assert.equal(started.length, 1);
    assert.match(started[0] ?? '', /evacuate/i);
    await put('Maintenance Ended');
    await bus.idle();
    assert.equal(started.length, 2);
    assert.match(started[1] ?? '', /restore/i);
  });
});
