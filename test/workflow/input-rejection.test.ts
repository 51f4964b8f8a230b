/**
 * Every function refuses bad input with InvalidInput naming the field, and changes nothing: each
 * handler of embedded/functions.ts, over the real dependencies against the simulator, is invoked with
 * its input missing `request`, with a bad node name and with an extra field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LocalHandler } from '../../embedded/executor.ts';
import { embeddedHandlers } from '../../embedded/functions.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { lambdaContext } from '../support/lambda-context.ts';
import { maintenanceRequested, startWorkflowSim, type WorkflowSim, writesSince } from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

const CONTEXT = lambdaContext('drainbridge-test', { requestId: 'input-rejection' });

const REQUEST = {
  ...maintenanceRequested('node-1'),
  drain: { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true, deleteEmptyDirData: true },
  nodeName: 'node-1',
};
const TASK_INPUT = {
  request: REQUEST,
  executionId: 'arn:aws:states:local:000000000000:execution:drainbridge-evacuate:input-rejection',
  startedAt: '2026-11-21T00:00:00.000Z',
};

/** A valid input for each function (bar `resolveTarget`, whose input is the execution's). */
const VALID_INPUTS: Record<string, Record<string, unknown>> = {
  planStart: { ...TASK_INPUT, request: { ...REQUEST, notBefore: '2026-11-21T01:00:00.000Z' } },
  admit: TASK_INPUT,
  awaitSlot: { ...TASK_INPUT, taskToken: 'token-1' },
  prepareBranches: TASK_INPUT,
  pass: { ...TASK_INPUT, branch: 'pods' },
  finishEvacuation: TASK_INPUT,
  failEvacuation: { ...TASK_INPUT, error: { Error: 'DeadlineExceeded', Cause: 'test' } },
  releaseHold: TASK_INPUT,
  restoreBranches: TASK_INPUT,
  finishRestore: { ...TASK_INPUT, release: { lastHold: true, uncordoned: true }, branches: { skipped: true } },
};

interface BadInput {
  readonly what: string;
  readonly input: Record<string, unknown>;
  /** The field the message must name. */
  readonly field: RegExp;
  /** How the message starts (default `invalid input to <function>: `). */
  readonly prefix?: string;
}

/** ResolveTarget checks the execution's input against the bus contract, whose refusal names the event. */
const CONTRACT_PREFIX = 'invalid "Maintenance Requested" event: ';

function badTaskInputs(valid: Record<string, unknown>): BadInput[] {
  const { request: _dropped, ...withoutRequest } = valid;
  return [
    { what: 'missing request', input: withoutRequest, field: /request: / },
    {
      what: 'bad node name',
      input: { ...valid, request: { ...REQUEST, nodeName: 'Node_1!' } },
      field: /request\.nodeName: must be a valid node name/,
    },
    { what: 'extra field', input: { ...valid, surprise: true }, field: /surprise/ },
  ];
}

function badResolveInputs(): BadInput[] {
  const valid = {
    machine: 'evacuate',
    input: { 'detail-type': 'Maintenance Requested', detail: maintenanceRequested('node-1') },
    executionId: TASK_INPUT.executionId,
    startedAt: TASK_INPUT.startedAt,
  };
  return [
    {
      what: 'missing request (no detail)',
      input: { ...valid, input: { 'detail-type': 'Maintenance Requested' } },
      field: /detail: must be a JSON object/,
      prefix: CONTRACT_PREFIX,
    },
    {
      what: 'bad node name',
      input: {
        ...valid,
        input: { ...valid.input, detail: maintenanceRequested('node-1', { target: { nodeName: 'Node_1!' } }) },
      },
      field: /detail\.target\.nodeName: must be a valid node name/,
      prefix: CONTRACT_PREFIX,
    },
    { what: 'extra field', input: { ...valid, surprise: true }, field: /surprise/ },
  ];
}

function badWindowInputs(): BadInput[] {
  const window = {
    name: 'weekly',
    schedule: 'cron(0 2 ? * SUN *)',
    timezone: 'Europe/Berlin',
    durationMinutes: 240,
    nodeSelector: '',
    maxNodes: 1,
    endsOn: 'reboot',
  };
  const valid = { window, scheduledTime: '2026-11-22T01:00:00Z' };
  return [
    { what: 'missing window', input: { scheduledTime: valid.scheduledTime }, field: /window: is required/ },
    {
      what: 'bad cron',
      input: { ...valid, window: { ...window, schedule: 'cron(0 2 * * *)' } },
      field: /window\.schedule: /,
    },
    { what: 'extra field', input: { ...valid, surprise: true }, field: /surprise/ },
  ];
}

describe('every function rejects bad input, naming the field, with zero writes', () => {
  let w: WorkflowSim;
  let handlers: Record<string, LocalHandler>;
  before(async () => {
    w = await startWorkflowSim(WORKFLOW_SCENARIO);
    handlers = embeddedHandlers(w.runtime.deps, () => new Date(w.sim.clock.now()));
  });
  after(async () => {
    await w?.stop();
  });

  it('covers every function', () => {
    assert.deepEqual(
      Object.keys(handlers).sort(),
      ['resolveTarget', 'openWindow', ...Object.keys(VALID_INPUTS)].sort(),
    );
  });

  const cases: [string, BadInput[]][] = [
    ['resolveTarget', badResolveInputs()],
    ['openWindow', badWindowInputs()],
    ...Object.entries(VALID_INPUTS).map(([key, valid]): [string, BadInput[]] => [key, badTaskInputs(valid)]),
  ];
  for (const [key, inputs] of cases) {
    for (const bad of inputs) {
      it(`${key}: ${bad.what}`, async () => {
        const handler = handlers[key];
        assert.ok(handler);
        const mark = w.sim.requestLog.mark();
        await assert.rejects(handler(bad.input, CONTEXT), (error: Error) => {
          assert.equal(error.name, 'InvalidInput');
          assert.ok(
            error.message.startsWith(bad.prefix ?? `invalid input to ${key}: `),
            `the message says what was refused: ${error.message}`,
          );
          assert.match(error.message, bad.field);
          return true;
        });
        assert.deepEqual(writesSince(w, mark), [], 'no writes');
      });
    }
  }
});
