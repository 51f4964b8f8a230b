/**
 * Every function's handler (the middy stack in functions/, as deployed) refuses malformed input with
 * InvalidInput naming the field, before anything external is touched: the handlers run over a
 * dependencies object whose every member throws when read, so a refusal that reached the cluster,
 * Nova or the bus would fail differently, and the touch counter proves zero calls and zero writes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Context } from 'aws-lambda';
import { lambdaContext } from '../../support/lambda-context.ts';

// Quiet the handlers: refusals are logged and counted as step failures, which is noise here. Read when
// each handler module is first imported, which happens below, after this.
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const EVENTS = new URL('../../../events/', import.meta.url);
const sample = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(name, EVENTS), 'utf8')) as Record<string, unknown>;

/** Deep copy of a sample with `change` applied (the samples are valid; each case breaks one field). */
function broken(name: string, change: (event: Record<string, unknown>) => void): Record<string, unknown> {
  const event = structuredClone(sample(name));
  change(event);
  return event;
}
const requestOf = (event: Record<string, unknown>) => event.request as Record<string, unknown>;

/** Dependencies that record and refuse every use. */
function trapDeps(): { deps: unknown; touched: string[] } {
  const touched: string[] = [];
  const deps = new Proxy(
    {},
    {
      get(_target, key) {
        // `then` is read when a value is awaited: answering undefined keeps the proxy a plain value.
        if (key === 'then') return undefined;
        touched.push(String(key));
        throw new Error(`dependency ${String(key)} was touched`);
      },
    },
  );
  return { deps, touched };
}

const CONTEXT = lambdaContext('drainbridge-dev-test');

interface Case {
  readonly fn: string;
  readonly what: string;
  readonly event: unknown;
  /** The field the refusal must name, as `path:`. */
  readonly field: string;
}

const CASES: readonly Case[] = [
  {
    fn: 'resolve-target',
    what: 'no target',
    event: broken('resolve-target.json', (e) => {
      delete ((e.input as Record<string, unknown>).detail as Record<string, unknown>).target;
    }),
    field: 'detail.target',
  },
  {
    fn: 'resolve-target',
    what: 'an unknown machine',
    event: broken('resolve-target.json', (e) => {
      e.machine = 'drain';
    }),
    field: 'machine',
  },
  {
    fn: 'await-slot',
    what: 'no task token to park',
    event: broken('await-slot.json', (e) => {
      delete e.taskToken;
    }),
    field: 'taskToken',
  },
  {
    fn: 'admit',
    what: 'a node name the API server would refuse',
    event: broken('admit.json', (e) => {
      requestOf(e).nodeName = 'Node_1!';
    }),
    field: 'request.nodeName',
  },
  {
    fn: 'prepare-branches',
    what: 'no requestId',
    event: broken('prepare-branches.json', (e) => {
      delete requestOf(e).requestId;
    }),
    field: 'request.requestId',
  },
  {
    fn: 'pass',
    what: 'an unknown branch',
    event: broken('pass-pods.json', (e) => {
      e.branch = 'gpus';
    }),
    field: 'branch',
  },
  {
    fn: 'finish-evacuation',
    what: 'no executionId',
    event: broken('finish-evacuation.json', (e) => {
      delete e.executionId;
    }),
    field: 'executionId',
  },
  {
    fn: 'fail-evacuation',
    what: 'no caught error',
    event: broken('fail-evacuation.json', (e) => {
      delete e.error;
    }),
    field: 'error',
  },
  {
    fn: 'release-hold',
    what: 'drain options of the wrong type',
    event: broken('release-hold.json', (e) => {
      (requestOf(e).drain as Record<string, unknown>).gracePeriodSeconds = 'soon';
    }),
    field: 'request.drain.gracePeriodSeconds',
  },
  {
    fn: 'restore-branches',
    what: 'an unknown field',
    event: broken('restore-branches.json', (e) => {
      requestOf(e).hostOverride = 'compute-9';
    }),
    field: 'request.hostOverride',
  },
  {
    fn: 'finish-restore',
    what: 'a release result that is not a boolean',
    event: broken('finish-restore.json', (e) => {
      (e.release as Record<string, unknown>).lastHold = 'yes';
    }),
    field: 'release.lastHold',
  },
  {
    fn: 'plan-start',
    what: 'a notBefore without a time zone',
    event: broken('plan-start.json', (e) => {
      requestOf(e).notBefore = '2026-11-21 16:00';
    }),
    field: 'request.notBefore',
  },
  {
    fn: 'open-window',
    what: 'a window in a time zone that does not exist',
    event: broken('open-window.json', (e) => {
      (e.window as Record<string, unknown>).timezone = 'Europe/Atlantis';
    }),
    field: 'window.timezone',
  },
  {
    fn: 'normalize-aws-notice',
    what: 'not an EventBridge event',
    event: { instance: 'i-abcd1111' },
    field: 'source',
  },
];

type Handler = (event: unknown, context: Context) => Promise<unknown>;
interface FunctionModule {
  readonly handler: { readonly taskName: string; withDeps(deps: never): Handler };
}

describe('function input rejections', () => {
  it('covers every function', () => {
    const functions = readdirSync(new URL('../../../functions/', import.meta.url))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''));
    assert.deepEqual([...new Set(CASES.map((c) => c.fn))].sort(), functions.sort());
  });

  for (const { fn, what, event, field } of CASES) {
    it(`${fn}: ${what} → InvalidInput naming ${field}, nothing touched`, async () => {
      const { handler } = (await import(`../../../functions/${fn}.ts`)) as FunctionModule;
      const { deps, touched } = trapDeps();
      const run = handler.withDeps(deps as never);
      await assert.rejects(run(event, CONTEXT), (error: Error) => {
        assert.equal(error.name, 'InvalidInput', `${error.name}: ${error.message}`);
        assert.ok(error.message.includes(`${field}:`), `"${error.message}" names ${field}`);
        return true;
      });
      assert.deepEqual(touched, []);
    });
  }

  it('the trap is real: a valid sample reaches the dependencies and fails on them', async () => {
    const { handler } = (await import('../../../functions/admit.ts')) as FunctionModule;
    const { deps, touched } = trapDeps();
    await assert.rejects(handler.withDeps(deps as never)(sample('admit.json'), CONTEXT), /was touched/);
    assert.ok(touched.length > 0);
  });
});
