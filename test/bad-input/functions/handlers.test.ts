/**
 * Bad input to every Lambda function through the entry Lambda calls — the exported `handler` (the whole
 * middy stack) with a Lambda context — configured from the environment exactly as on AWS, except that the
 * cluster is the simulator (drainbridge's ServiceAccount under deploy/base/rbac). Each case must end in an
 * error of the expected name whose message names the problem, with no stack trace in the message or in
 * any log line printed, and the simulator's request log must show no write: the check reads what the API
 * server saw, not what the code says it did.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Context } from 'aws-lambda';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../../sim/drainbridge.ts';
import { captureOutput } from '../../support/capture.ts';
import { assertCleanError, uncleanParts } from '../../support/clean-error.ts';
import { lambdaContext } from '../../support/lambda-context.ts';
import { assertNoWrites } from '../../support/request-log.ts';
import { CASES, FUNCTIONS, type FunctionFile } from './cases.ts';

const CONTEXT = lambdaContext('drainbridge-dev-bad-input');

type Handler = (event: unknown, context: Context) => Promise<unknown>;

let cluster: DrainbridgeCluster;
const handlers = new Map<FunctionFile, Handler>();

before(async () => {
  cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 20 });
  // The environment a deployed function reads (serverless.yml), pointed at the simulator.
  Object.assign(process.env, {
    DRAINBRIDGE_MODE: 'embedded',
    DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig',
    KUBECONFIG: cluster.kubeconfigPath,
    AWS_REGION: 'eu-west-1',
  });
  for (const fn of FUNCTIONS) {
    // Every function in functions/ has cases (a new function without them fails here).
    assert.ok(
      CASES.some((c) => c.fn === fn),
      `${fn} has bad-input cases`,
    );
    const module = (await import(`../../../functions/${fn}.ts`)) as { handler: Handler };
    handlers.set(fn, module.handler);
  }
  const files = readdirSync(new URL('../../../functions/', import.meta.url)).map((f) => f.replace(/\.ts$/, ''));
  assert.deepEqual(files.sort(), [...FUNCTIONS].sort(), 'FUNCTIONS lists every file in functions/');
});
after(async () => {
  await cluster?.stop();
});

describe('bad input to every function (the Lambda entry, against the simulator)', () => {
  for (const c of CASES) {
    it(`${c.fn}: ${c.what}`, async () => {
      const handler = handlers.get(c.fn);
      assert.ok(handler, `functions/${c.fn}.ts exports handler`);
      const mark = cluster.sim.requestLog.mark();
      const run = await captureOutput(() => handler(c.event, CONTEXT));
      if (c.error) {
        assert.ok(run.error instanceof Error, `refused (got ${JSON.stringify(run.result)})`);
        assert.equal(run.error.name, c.error, run.error.message);
        assertCleanError(run.error.message, c.names, `${c.fn} refusing ${c.what}`);
      } else {
        // The normaliser answers a malformed notice (EventBridge would retry a thrown one for a day).
        const skipped = (run.result as { skipped?: string } | undefined)?.skipped ?? '';
        assertCleanError(skipped, c.names, `${c.fn} skipping ${c.what}`);
      }
      assert.deepEqual(uncleanParts(run.lines.join('\n')), [], `what it printed:\n${run.lines.join('\n')}`);
      assertNoWrites(cluster.sim, mark, `${c.fn}: ${c.what}`);
    });
  }
});
