/**
 * Embedded, one process runs many invocations of the same task at once (a hundred requests waiting in
 * line each retry Admit); on Lambda a container runs one at a time. Each invocation's log lines must
 * carry its own correlation ids, never those of an invocation that started while it awaited.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { defineTask } from '../../../lib/lambda/task.ts';
import { configureLogging, currentLogSettings } from '../../../lib/log/sink.ts';

const CONTEXT = {
  functionName: 'probe',
  awsRequestId: 'aws-request',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:probe',
  memoryLimitInMB: '512',
} as unknown as Context;

describe('log lines of concurrent invocations of one embedded task', () => {
  const before = currentLogSettings();
  after(() => configureLogging(before));

  it('carry each invocation its own requestId, node and executionId', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'drainbridge-logs-')), 'tasks.log');
    configureLogging({ level: 'info', format: 'json', file });
    let releaseFirst: () => void = () => undefined;
    const secondStarted = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const probe = defineTask({
      name: 'probe',
      input: z.object({ executionId: z.string(), request: z.object({ requestId: z.string(), nodeName: z.string() }) }),
      deps: async () => ({}),
      run: async (input: { request: { requestId: string } }, _deps, tools) => {
        // The first invocation logs only after the second one has begun (its middleware ran).
        if (input.request.requestId === 'first') await secondStarted;
        else releaseFirst();
        tools.logger.info('probe logged');
        return input.request.requestId;
      },
    });
    const handler = probe.withDeps({});
    const event = (id: string) => ({ executionId: `exec-${id}`, request: { requestId: id, nodeName: `node-${id}` } });
    const results = await Promise.all([handler(event('first'), CONTEXT), handler(event('second'), CONTEXT)]);
    assert.deepEqual(results, ['first', 'second']);
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.message === 'probe logged');
    assert.equal(lines.length, 2, 'one line per invocation');
    for (const line of lines) {
      const id = String(line.requestId);
      assert.deepEqual(
        [line.node, line.executionId, line.correlation_id],
        [`node-${id}`, `exec-${id}`, id],
        `a line of ${id} names only its own invocation: ${JSON.stringify(line)}`,
      );
    }
    assert.deepEqual(lines.map((line) => line.requestId).sort(), ['first', 'second']);
  });
});
