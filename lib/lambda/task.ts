/**
 * `defineTask`: turns one unit of domain work into a Lambda handler (a thin middy shell). The same
 * handler runs on AWS and in the embedded executor. Dependencies (config, clients) are built once
 * per container and injected; no evacuation state is kept between invocations.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import { createLogger, type Logger } from '../log/logger.ts';
import { routeToSink } from '../log/sink.ts';
import { correlationIds, failureMetric, logOutcome, memoryFromRuntime, validateInput } from './middleware.ts';

export interface TaskTools {
  readonly logger: Logger;
  /** The instant the task runs at (injected so tests control time). */
  readonly now: () => Date;
}

export interface TaskSpec<I, O, D> {
  /** The function's name in serverless.yml; also the metric dimension. */
  readonly name: string;
  /**
   * The input contract. Its parsed value is what `run` receives as `I` (the schema's inferred type can
   * differ in representation, e.g. optional keys for the domain's union types).
   */
  readonly input: z.ZodType;
  /** Builds the dependencies (config, clients); called once per container, lazily. */
  readonly deps: () => Promise<D>;
  readonly run: (input: I, deps: D, tools: TaskTools) => Promise<O>;
}

export type TaskHandler<O> = (event: unknown, context: Context) => Promise<O>;

/** A task's handler; `withDeps` gives the same middleware stack over injected dependencies (embedded mode, tests), built for each invocation. */
export interface DefinedTask<O, D> extends TaskHandler<O> {
  readonly taskName: string;
  withDeps(deps: D, now?: () => Date): TaskHandler<O>;
}

function buildHandler<I, O, D>(spec: TaskSpec<I, O, D>, getDeps: () => Promise<D>, now: () => Date): TaskHandler<O> {
  const logger = createLogger(`drainbridge.${spec.name}`);
  const metrics = routeToSink(new Metrics({ namespace: 'drainbridge', serviceName: 'drainbridge' }), 'metrics');
  const core = async (event: I): Promise<O> => spec.run(event, await getDeps(), { logger, now });
  return middy(core)
    .use(memoryFromRuntime())
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(failureMetric(metrics, spec.name))
    .use(logOutcome(logger))
    .use(correlationIds(logger))
    .use(validateInput(spec.name, spec.input)) as unknown as TaskHandler<O>;
}

/** Defines a Lambda handler for `spec`; dependencies are built from the environment on first use. */
export function defineTask<I, O, D>(spec: TaskSpec<I, O, D>): DefinedTask<O, D> {
  let deps: Promise<D> | undefined;
  const fromEnvironment = (): Promise<D> => {
    deps ??= spec.deps().catch((error: unknown) => {
      deps = undefined; // a failed start (bad config, unreachable secret) is retried on the next invocation
      throw error;
    });
    return deps;
  };
  const handler = buildHandler(spec, fromEnvironment, () => new Date());
  return Object.assign(handler, {
    taskName: spec.name,
    withDeps: (given: D, now: () => Date = () => new Date()): TaskHandler<O> => {
      const deps = async () => given;
      // Embedded, one process runs many invocations of a task at once, and the logger carries the
      // invocation's correlation ids: each gets its own logger and middleware stack, or a line could name
      // an invocation that began while this one awaited. On Lambda a container runs one invocation at a
      // time, so the handler above is built once.
      return (event, context) => buildHandler(spec, deps, now)(event, context);
    },
  });
}
