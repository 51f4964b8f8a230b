/**
 * The middy middlewares every drainbridge function uses, each a factory returning only the phases it
 * needs (the middy shape). Kept apart from the handlers so each can be tested on its own.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { z } from 'zod';
import { problemsOf, safeParseReporting } from '../bus/contracts/parse.ts';
import { InvalidInput, isExpectedError } from '../errors/index.ts';

/** What a value is, for a refusal: `an array`, `a string`, `null`. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Parses the event with `schema`; the handler receives the parsed value. Refusals name every bad field.
 * Every function takes a JSON object: anything else is refused saying so (zod would only say "is required").
 */
export function validateInput(what: string, schema: z.ZodType): MiddlewareObj {
  return {
    name: 'validateInput',
    before: (request) => {
      const event: unknown = request.event;
      if (typeof event !== 'object' || event === null || Array.isArray(event)) {
        throw new InvalidInput(`invalid input to ${what}`, [
          { path: '', message: `the input must be a JSON object (got ${kindOf(event)})` },
        ]);
      }
      const result = safeParseReporting(schema, request.event);
      if (!result.success) throw new InvalidInput(`invalid input to ${what}`, problemsOf(result.error));
      request.event = result.data;
    },
  };
}

/** Pulls the correlation ids (execution id, requestId, node) out of the task input into every log line. */
export function correlationIds(logger: Logger): MiddlewareObj {
  return {
    name: 'correlationIds',
    before: (request) => {
      const event = request.event as { executionId?: unknown; request?: { requestId?: unknown; nodeName?: unknown } };
      const keys: Record<string, string> = {};
      if (typeof event?.executionId === 'string') keys.executionId = event.executionId;
      if (typeof event?.request?.requestId === 'string') keys.requestId = event.request.requestId;
      if (typeof event?.request?.nodeName === 'string') keys.node = event.request.nodeName;
      logger.appendKeys(keys);
      if (keys.requestId) logger.setCorrelationId(keys.requestId);
    },
  };
}

/**
 * Errors that are part of normal operation (lib/errors/registry.ts, `expected`): polling (`NotYetDone`),
 * waiting for a slot, a duplicate delivery dropped (`SkipEvent`), a Restore cancelling its Evacuate, an
 * operator's abort. Every one is a Lambda error in CloudWatch, so alarms must not use the Lambda Errors
 * metric; they use drainbridge's `StepFailures` metric, which counts everything else.
 */
export const isExpected = isExpectedError;

/** The metric the alarm watches: its name and the one dimension set it is published with. */
export const STEP_FAILURES = Object.freeze({ namespace: 'drainbridge', name: 'StepFailures', dimensions: ['service'] });

/**
 * Counts real failures in the `drainbridge` metric namespace (EMF log lines: no API call, no extra IAM).
 * Published with the dimension set `[service]` — exactly what `StepFailuresAlarm` in serverless.yml
 * watches (a CloudWatch alarm matches one dimension set exactly; `[service, function]` never matched it,
 * issue 12 item 6). The function and the error's name ride along as EMF properties, searchable in Logs
 * Insights without making a metric per function.
 */
export function failureMetric(metrics: Metrics, functionName: string): MiddlewareObj {
  return {
    name: 'failureMetric',
    onError: (request) => {
      const name = request.error?.name ?? 'Error';
      if (isExpected(name)) return;
      metrics.addMetadata('function', functionName);
      metrics.addMetadata('errorType', name);
      metrics.addMetric(STEP_FAILURES.name, MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
  };
}

/** Logs the failure once, redacted, at the right level: expected errors are not errors. */
export function logOutcome(logger: Logger): MiddlewareObj {
  return {
    name: 'logOutcome',
    onError: (request) => {
      const error = request.error;
      if (!error) return;
      if (isExpected(error.name)) logger.info(error.message, { errorType: error.name });
      else logger.error('step failed', error);
    },
  };
}

/**
 * The memory the function was given, as the runtime states it (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, which
 * Lambda and `serverless invoke local` both set from serverless.yml) over the context's: invoke local
 * hard-codes 1024 there, and the logs' function_memory_size must say what is configured. On Lambda the
 * two are equal.
 */
export function memoryFromRuntime(env: Readonly<Record<string, string | undefined>> = process.env): MiddlewareObj {
  return {
    name: 'memoryFromRuntime',
    before: (request) => {
      const configured = env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE;
      if (configured && /^\d+$/.test(configured)) request.context.memoryLimitInMB = configured;
    },
  };
}
