/**
 * Issue 12, item 6: the alarm fires. The packaged `StepFailuresAlarm` (from the CloudFormation template
 * `serverless package` writes, or serverless.yml's resource when the template is not there) is compared
 * with the EMF line a real handler prints when a step fails: same namespace, metric, dimension set and
 * dimension values — the datum the alarm would see. Expected errors (polling, waiting, duplicates, a
 * Restore's cancel, an operator's abort) print no metric and log at INFO, not ERROR.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Context } from 'aws-lambda';
import { parse } from 'yaml';
import {
  EvacuationAborted,
  EvacuationCancelled,
  EvacuationFailed,
  NotYetDone,
  SkipEvent,
  SlotUnavailable,
} from '../../../lib/errors/index.ts';
import { defineTask } from '../../../lib/lambda/task.ts';
import { captureOutput } from '../../support/capture.ts';

// As on Lambda: log lines and EMF go to stdout (lib/log/sink.ts routes them elsewhere off Lambda). Set
// before any handler's logger exists, so the handler is imported after.
process.env.AWS_LAMBDA_FUNCTION_NAME ??= 'drainbridge-test';
const { handler: passHandler } = await import('../../../functions/pass.ts');

const ROOT = join(import.meta.dirname, '..', '..', '..');
const TEMPLATE = join(ROOT, '.serverless/cloudformation-template-update-stack.json');

interface AlarmProperties {
  Namespace: string;
  MetricName: string;
  Dimensions: { Name: string; Value: string }[];
  Statistic: string;
  Threshold: number;
  ComparisonOperator: string;
}

/** The alarm as it deploys: the packaged template when `serverless package` ran, else serverless.yml's. */
function packagedAlarm(): { from: string; alarm: AlarmProperties } {
  if (existsSync(TEMPLATE)) {
    const template = JSON.parse(readFileSync(TEMPLATE, 'utf8'));
    return { from: TEMPLATE, alarm: template.Resources.StepFailuresAlarm.Properties };
  }
  // CloudFormation's short tags (!Ref, !GetAtt, !Sub) as plain values: only the alarm's literals are read.
  const tags = ['Ref', 'GetAtt', 'Sub'].map((tag) => ({ tag: `!${tag}`, resolve: (value: unknown) => value }));
  const yml = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'), { customTags: tags as never });
  return { from: 'serverless.yml', alarm: yml.resources.Resources.StepFailuresAlarm.Properties };
}

const context = {
  functionName: 'drainbridge-test',
  awsRequestId: 'test',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:test',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;

/** Runs `call` and returns every line it printed (EMF and INFO logs go to stdout, WARN and ERROR to stderr). */
async function captured(call: () => Promise<unknown>): Promise<string[]> {
  return (await captureOutput(call)).lines;
}

const emfOf = (lines: string[]) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown> & { _aws?: unknown }).filter((r) => r._aws);

describe('issue 12 item 6: the StepFailures alarm matches the metric the code emits', () => {
  it('issue 12 item 6: a failing step prints a datum the packaged alarm sees', async () => {
    const { from, alarm } = packagedAlarm();
    // The real pass handler refusing bad input: InvalidInput, a failure to count.
    const lines = await captured(() => passHandler({ branch: 'pods' }, context));
    const [emf] = emfOf(lines);
    assert.ok(emf, `no EMF line among:\n${lines.join('\n')}`);
    const metrics = (
      emf._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }
    ).CloudWatchMetrics[0];
    assert.ok(metrics);
    assert.equal(metrics.Namespace, alarm.Namespace, `namespace (alarm from ${from})`);
    assert.ok(
      metrics.Metrics.some((m) => m.Name === alarm.MetricName),
      `metric ${alarm.MetricName}`,
    );
    const alarmSet = alarm.Dimensions.map((d) => d.Name).sort();
    assert.ok(
      metrics.Dimensions.some((set) => JSON.stringify([...set].sort()) === JSON.stringify(alarmSet)),
      `the alarm watches [${alarmSet}]; the metric is published with ${JSON.stringify(metrics.Dimensions)}`,
    );
    for (const dimension of alarm.Dimensions) assert.equal(emf[dimension.Name], dimension.Value, dimension.Name);
    assert.equal(alarm.Statistic, 'Sum');
    assert.equal(alarm.ComparisonOperator, 'GreaterThanOrEqualToThreshold');
    assert.ok(Number(emf[alarm.MetricName]) >= alarm.Threshold, 'one failure reaches the threshold');
    assert.equal(emf.function, 'pass', 'the function rides along as a property');
    assert.equal(emf.errorType, 'InvalidInput');
  });

  const throwing = (error: Error) =>
    defineTask({
      name: 'probe',
      input: { safeParse: (v: unknown) => ({ success: true, data: v }) } as never,
      deps: async () => ({}),
      run: async () => {
        throw error;
      },
    });

  for (const error of [
    new NotYetDone('pods: 0/1 moved'),
    new SlotUnavailable('all 1 maintenance slot(s) are in use'),
    new SkipEvent('duplicate dropped'),
    new EvacuationCancelled('restored while it ran'),
    new EvacuationAborted('aborted by an operator'),
  ]) {
    it(`issue 12 item 6: ${error.name} is not a failure: no metric, logged at INFO`, async () => {
      const lines = await captured(() => throwing(error)({}, context));
      assert.deepEqual(emfOf(lines), [], 'no StepFailures datum');
      const levels = lines.map((line) => (JSON.parse(line) as { level?: string }).level).filter(Boolean);
      assert.ok(!levels.includes('ERROR'), `logged at ${levels.join(', ')}`);
      assert.ok(levels.includes('INFO'));
    });
  }

  it('a real failure is counted and logged at ERROR', async () => {
    const lines = await captured(() => throwing(new EvacuationFailed('node deleted'))({}, context));
    assert.equal(emfOf(lines).length, 1);
    assert.ok(lines.some((line) => (JSON.parse(line) as { level?: string }).level === 'ERROR'));
  });
});
