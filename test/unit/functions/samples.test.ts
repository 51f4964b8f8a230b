/**
 * Every file in events/ is parsed with the input schema of what it is a sample for, so a sample can
 * never go stale: function samples with their task's `input` schema, execution inputs with ResolveTarget's
 * (which applies the bus contracts and the machine's allowed detail-types), `put-events` entries as the
 * events EventBridge would deliver from them. Malformed samples in events/invalid/ must be refused,
 * naming the field.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { problemsOf } from '../../../lib/bus/contracts/parse.ts';
import { matchesPattern } from '../../../lib/bus/event-pattern.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';
import { normalizeAwsNoticeTask } from '../../../lib/sources/clouds/aws/normalize.ts';
import { checkDeadline } from '../../../lib/workflow/guard.ts';
import { ResolveInput, type TaskInput } from '../../../lib/workflow/state.ts';
import { admitTask, passTask, prepareBranchesTask } from '../../../lib/workflow/tasks/evacuate-steps.ts';
import {
  failEvacuationTask,
  finishEvacuationTask,
  finishRestoreTask,
  releaseHoldTask,
  restoreBranchesTask,
} from '../../../lib/workflow/tasks/outcome-steps.ts';
import { resolveTargetTask } from '../../../lib/workflow/tasks/resolve-target.ts';
import { planStartTask } from '../../../lib/workflow/tasks/start-steps.ts';
import { awaitSlotTask } from '../../../lib/workflow/tasks/wait-steps.ts';
import { openWindowTask } from '../../../lib/workflow/tasks/window-steps.ts';

const EVENTS = new URL('../../../events/', import.meta.url);
const FUNCTIONS = new URL('../../../functions/', import.meta.url);
const SERVERLESS_YML = new URL('../../../serverless.yml', import.meta.url);

/** The EventBridge patterns that start `machine` in serverless.yml (CloudFormation tags read as plain values). */
function rulePatterns(machine: 'evacuate' | 'restore'): unknown[] {
  const doc = parseYaml(readFileSync(SERVERLESS_YML, 'utf8'), { logLevel: 'silent' }) as {
    stepFunctions: { stateMachines: Record<string, { events: { eventBridge?: { event: unknown } }[] }> };
  };
  const events = doc.stepFunctions.stateMachines[machine]?.events ?? [];
  return events.flatMap((e) => (e.eventBridge ? [e.eventBridge.event] : []));
}

interface Spec {
  readonly name: string;
  readonly input: z.ZodType;
}

/** Function samples: events/<file> → the task whose input it is. */
const FUNCTION_SAMPLES: Record<string, Spec> = {
  'resolve-target.json': resolveTargetTask,
  'resolve-target-restore.json': resolveTargetTask,
  'admit.json': admitTask,
  'await-slot.json': awaitSlotTask,
  'prepare-branches.json': prepareBranchesTask,
  'pass-pods.json': passTask,
  'pass-nova.json': passTask,
  'pass-infra-pods.json': passTask,
  'finish-evacuation.json': finishEvacuationTask,
  'fail-evacuation.json': failEvacuationTask,
  'release-hold.json': releaseHoldTask,
  'restore-branches.json': restoreBranchesTask,
  'finish-restore.json': finishRestoreTask,
  'normalize-aws-notice-health.json': normalizeAwsNoticeTask,
  'normalize-aws-notice-spot.json': normalizeAwsNoticeTask,
  'plan-start.json': planStartTask,
  'open-window.json': openWindowTask,
};

/** Execution inputs (what the rules deliver): events/<file> → the machine it starts. */
const EXECUTION_SAMPLES: Record<string, 'evacuate' | 'restore'> = {
  'evacuate-maintenance-requested.json': 'evacuate',
  'evacuate-node-cordoned.json': 'evacuate',
  'restore-maintenance-ended.json': 'restore',
  'restore-node-uncordoned.json': 'restore',
};

/** `aws events put-events --entries file://…` samples → the machine their rule starts. */
const PUT_EVENTS_SAMPLES: Record<string, 'evacuate' | 'restore'> = {
  'put-events-maintenance-requested.json': 'evacuate',
  'put-events-maintenance-ended.json': 'restore',
};

/** Malformed samples (for scripts/check-invoke-local.sh) → the task and the field its refusal names. */
const INVALID_SAMPLES: Record<string, { spec: Spec; field: string }> = {
  'admit-bad-node-name.json': { spec: admitTask, field: 'request.nodeName' },
  'pass-unknown-branch.json': { spec: passTask, field: 'branch' },
  'resolve-target-no-target.json': { spec: resolveTargetTask, field: 'detail.target' },
};

function readSample(name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, EVENTS), 'utf8'));
}

/** Parses like the validateInput middleware: a failed parse or a refinement's InvalidInput, as problems. */
function refusal(spec: Spec, event: unknown): string | undefined {
  try {
    const result = spec.input.safeParse(event);
    if (result.success) return undefined;
    return problemsOf(result.error)
      .map((p) => `${p.path}: ${p.message}`)
      .join('; ');
  } catch (error) {
    if (error instanceof InvalidInput) return error.message;
    throw error;
  }
}

/**
 * Every instant a sample's text carries (inside JSON strings too): ISO 8601 (`2099-11-21T10:00:00Z`), prose
 * (`2099-02-11 06:00:00 UTC`) and RFC 1123 (AWS Health's `Wed, 11 Feb 2099 06:00:00 GMT`). A request id
 * that merely contains a day (`manual-2026-11-21-node-1`) is a name, not an instant.
 */
function instantsIn(text: string): { readonly written: string; readonly at: number }[] {
  const patterns = [
    /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z/g,
    /\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/g,
    /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT/g,
  ];
  return patterns.flatMap((pattern) =>
    [...text.matchAll(pattern)].map(([written]) => ({ written, at: Date.parse(written.replace(' UTC', 'Z')) })),
  );
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

describe('events/ samples', () => {
  it('has a sample for every function and no file that no test reads', () => {
    const listed = readdirSync(EVENTS).filter((f) => f.endsWith('.json'));
    const known = new Set([
      ...Object.keys(FUNCTION_SAMPLES),
      ...Object.keys(EXECUTION_SAMPLES),
      ...Object.keys(PUT_EVENTS_SAMPLES),
    ]);
    assert.deepEqual(
      listed.filter((f) => !known.has(f)),
      [],
      'samples without a schema to check them',
    );
    const invalid = readdirSync(new URL('invalid/', EVENTS)).filter((f) => f.endsWith('.json'));
    assert.deepEqual(invalid.sort(), Object.keys(INVALID_SAMPLES).sort());
    const functions = readdirSync(FUNCTIONS)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''));
    const covered = new Set(Object.values(FUNCTION_SAMPLES).map((spec) => kebab(spec.name)));
    assert.deepEqual(
      functions.filter((f) => !covered.has(f)),
      [],
      'functions without a sample',
    );
    assert.equal(functions.length, 13);
  });

  for (const [file, spec] of Object.entries(FUNCTION_SAMPLES)) {
    it(`${file} is valid input to ${spec.name}`, () => {
      assert.equal(refusal(spec, readSample(file)), undefined);
    });
  }

  for (const [file, machine] of Object.entries(EXECUTION_SAMPLES)) {
    it(`${file} starts the ${machine} machine`, () => {
      const input = {
        machine,
        input: readSample(file),
        executionId: 'arn:…:manual',
        startedAt: '2026-11-21T10:00:00Z',
      };
      assert.equal(refusal(resolveTargetTask, input), undefined);
      assert.ok(
        rulePatterns(machine).some((pattern) => matchesPattern(pattern, input.input)),
        `a ${machine} rule in serverless.yml matches it`,
      );
      const other = machine === 'evacuate' ? 'restore' : 'evacuate';
      assert.match(refusal(resolveTargetTask, { ...input, machine: other }) ?? '', /detail-type: must be one of/);
      assert.ok(!rulePatterns(other).some((pattern) => matchesPattern(pattern, input.input)), `no ${other} rule`);
    });
  }

  for (const [file, machine] of Object.entries(PUT_EVENTS_SAMPLES)) {
    it(`${file} is an entry whose delivered event starts the ${machine} machine`, () => {
      const entries = readSample(file) as { Source: string; DetailType: string; Detail: string }[];
      assert.equal(entries.length, 1);
      for (const entry of entries) {
        const delivered = { source: entry.Source, 'detail-type': entry.DetailType, detail: JSON.parse(entry.Detail) };
        const input = { machine, input: delivered, executionId: 'arn:…:manual', startedAt: '2026-11-21T10:00:00Z' };
        assert.equal(refusal(resolveTargetTask, input), undefined);
        assert.ok(
          rulePatterns(machine).some((pattern) => matchesPattern(pattern, delivered)),
          'a rule matches it',
        );
      }
    });
  }

  for (const [file, { spec, field }] of Object.entries(INVALID_SAMPLES)) {
    it(`invalid/${file} is refused by ${spec.name}, naming ${field}`, () => {
      const message = refusal(spec, readSample(`invalid/${file}`));
      assert.ok(message, 'the sample must be refused');
      assert.ok(message.includes(`${field}:`), `"${message}" names ${field}`);
    });
  }

  it('no sample carries an instant in the past: a raw sample runs as it is, whenever it is run', () => {
    const now = Date.now();
    const samples = readdirSync(EVENTS).filter((f) => f.endsWith('.json'));
    let seen = 0;
    for (const file of samples) {
      for (const { written, at } of instantsIn(readFileSync(new URL(file, EVENTS), 'utf8'))) {
        seen++;
        assert.ok(Number.isFinite(at), `${file}: ${written} does not parse`);
        assert.ok(at > now, `${file}: ${written} is in the past`);
      }
    }
    assert.ok(seen >= samples.length, `the check read the samples' instants (${seen})`);
    assert.deepEqual(
      instantsIn('manual-2026-11-21-node-1 at 2020-01-01T00:00:00Z, Sat, 11 Feb 2023 06:00:00 GMT').map(
        (i) => i.written,
      ),
      ['2020-01-01T00:00:00Z', 'Sat, 11 Feb 2023 06:00:00 GMT'],
      'the check sees a past instant, and no request id',
    );
  });

  it('a task sample passes the deadline check every evacuation step makes (its deadline and start are ahead)', () => {
    for (const file of Object.keys(FUNCTION_SAMPLES)) {
      const sample = readSample(file) as Partial<TaskInput>;
      if (!sample.request || !sample.startedAt) continue;
      assert.doesNotThrow(
        () => checkDeadline(sample.request as TaskInput['request'], sample.startedAt ?? '', 24, new Date()),
        file,
      );
    }
  });

  it('ResolveInput is what resolveTarget parses (the execution samples test the deployed schema)', () => {
    assert.equal(resolveTargetTask.input, ResolveInput);
  });
});
