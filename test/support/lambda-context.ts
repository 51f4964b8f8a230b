/**
 * The Lambda Context a handler gets, for tests that call a deployed function's handler directly (as
 * `serverless invoke` does): the function's name as serverless.yml names it, its region, one request id.
 */
import type { Context } from 'aws-lambda';

export function lambdaContext(
  functionName: string,
  options: { readonly region?: string; readonly requestId?: string } = {},
): Context {
  const region = options.region ?? 'eu-west-1';
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: options.requestId ?? '00000000-0000-4000-8000-000000000000',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 60_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
