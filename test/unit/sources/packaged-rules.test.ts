/**
 * The notices' AWS resources as they deploy: the packaged CloudFormation template (`serverless package`
 * writes it; CI packages before the tests), or serverless.yml with its default params where the template
 * is not there. The default-bus AWS Health rule matches exactly the codes the normaliser maps
 * (`HEALTH_EVENT_TYPES`), the Spot warning rule is created disabled, and every maintenance window's
 * Scheduler schedule carries its time zone (`ScheduleExpressionTimezone`).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { HEALTH_EVENT_TYPES } from '../../../lib/sources/clouds/aws/eventbridge.ts';
import { scheduleEvents } from '../../../lib/sources/windows/serverless.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const TEMPLATE = join(ROOT, '.serverless/cloudformation-template-update-stack.json');

interface RuleShape {
  readonly state: 'ENABLED' | 'DISABLED';
  /** Undefined: the account's default bus. */
  readonly eventBusName: unknown;
  readonly pattern: { source?: string[]; 'detail-type'?: string[]; detail?: Record<string, string[]> };
}
interface ScheduleShape {
  readonly name: string;
  readonly expression: string;
  readonly timezone: string | undefined;
  /** The window the schedule opens (its input), whose time zone the schedule must carry. */
  readonly windowTimezone: string;
}

type Resource = { Type: string; Properties: Record<string, unknown> };

/** The normaliser's rules and the windows' schedules from the packaged template. */
function fromTemplate(): { rules: RuleShape[]; schedules: ScheduleShape[] } {
  const resources = Object.values(JSON.parse(readFileSync(TEMPLATE, 'utf8')).Resources as Record<string, Resource>);
  const targetsNormaliser = (r: Resource) =>
    JSON.stringify((r.Properties.Targets as unknown[]) ?? []).includes('NormalizeAwsNoticeLambdaFunction');
  const rules = resources
    .filter((r) => r.Type === 'AWS::Events::Rule' && targetsNormaliser(r))
    .map((r) => ({
      state: r.Properties.State as RuleShape['state'],
      eventBusName: r.Properties.EventBusName,
      pattern: r.Properties.EventPattern as RuleShape['pattern'],
    }));
  const schedules = resources
    .filter((r) => r.Type === 'AWS::Scheduler::Schedule')
    .map((r) => {
      const target = r.Properties.Target as { Input: string };
      return {
        name: r.Properties.Name as string,
        expression: r.Properties.ScheduleExpression as string,
        timezone: r.Properties.ScheduleExpressionTimezone as string | undefined,
        windowTimezone: (JSON.parse(target.Input) as { window: { timezone: string } }).window.timezone,
      };
    });
  return { rules, schedules };
}

/** The same from serverless.yml: the function's events with the default params resolved. */
function fromServerlessYml(): { rules: RuleShape[]; schedules: ScheduleShape[] } {
  const tags = ['Ref', 'GetAtt', 'Sub'].map((tag) => ({ tag: `!${tag}`, resolve: (value: unknown) => value }));
  const yml = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'), { customTags: tags as never });
  const params = yml.params.default as Record<string, string>;
  type BridgeEvent = { eventBridge: { enabled?: string; eventBus?: unknown; pattern: RuleShape['pattern'] } };
  const rules = (yml.functions.normalizeAwsNotice.events as BridgeEvent[]).map(({ eventBridge }) => {
    const enabled = eventBridge.enabled ?? 'true';
    const resolved = enabled.replace(
      // serverless.yml's own variable syntax, not a template literal.
      `\${strToBool(\${param:spotInterruptionWarnings})}`,
      params.spotInterruptionWarnings ?? '',
    );
    return {
      state: resolved === 'true' ? ('ENABLED' as const) : ('DISABLED' as const),
      eventBusName: eventBridge.eventBus,
      pattern: eventBridge.pattern,
    };
  });
  const schedules = scheduleEvents(params.maintenanceWindows ?? '', 'dev').map(({ schedule }) => ({
    name: schedule.name,
    expression: schedule.rate[0] ?? '',
    timezone: schedule.timezone,
    windowTimezone: schedule.input.window.timezone,
  }));
  return { rules, schedules };
}

const packaged = existsSync(TEMPLATE);
const { rules, schedules } = packaged ? fromTemplate() : fromServerlessYml();
const from = packaged ? TEMPLATE : 'serverless.yml';

describe(`the notices' packaged AWS resources (${packaged ? 'the packaged template' : 'serverless.yml'})`, () => {
  it('the AWS Health rule is on the default bus and matches exactly HEALTH_EVENT_TYPES', () => {
    const health = rules.filter((rule) => rule.pattern.source?.includes('aws.health'));
    assert.equal(health.length, 1, `one Health rule in ${from}`);
    const [rule] = health;
    assert.equal(rule?.eventBusName, undefined, 'the default bus, where AWS Health puts its events');
    assert.equal(rule?.state, 'ENABLED');
    assert.deepEqual(rule?.pattern['detail-type'], ['AWS Health Event']);
    assert.deepEqual(rule?.pattern.detail?.service, ['EC2']);
    assert.deepEqual(rule?.pattern.detail?.eventTypeCategory, ['scheduledChange']);
    assert.deepEqual([...(rule?.pattern.detail?.eventTypeCode ?? [])].sort(), Object.keys(HEALTH_EVENT_TYPES).sort());
  });

  it('the EC2 Spot interruption warning rule is disabled by default', () => {
    const spot = rules.filter((rule) =>
      rule.pattern['detail-type']?.includes('EC2 Spot Instance Interruption Warning'),
    );
    assert.equal(spot.length, 1, `one Spot rule in ${from}`);
    assert.deepEqual(spot[0]?.pattern.source, ['aws.ec2']);
    assert.equal(spot[0]?.state, 'DISABLED');
    assert.equal(spot[0]?.eventBusName, undefined);
  });

  it("each window's schedule carries the window's time zone (ScheduleExpressionTimezone)", () => {
    assert.ok(schedules.length > 0, `the default example window is in ${from}`);
    for (const schedule of schedules) {
      assert.ok(schedule.timezone, `${schedule.name}: a time zone`);
      assert.equal(schedule.timezone, schedule.windowTimezone, `${schedule.name}: the window's own`);
      assert.match(schedule.expression, /^cron\(/);
    }
  });
});
