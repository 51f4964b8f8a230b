/**
 * AWS list prices the cost figures use — the one place they are written down. Region US East
 * (N. Virginia), the region the AWS pricing pages quote; read on 28 Nov 2026 from stored copies of the
 * pages below. No free tier is subtracted (a fleet's bill is past it), and no Savings Plan.
 *
 * serverless.yml deploys to eu-west-1 unless told otherwise: the Step Functions page lists Europe
 * (Ireland) at the same $0.025 per 1,000 transitions; the other three were not checked for Ireland here.
 */
export const PRICES = {
  region: 'us-east-1',
  readOn: '2026-11-28',
  /** https://aws.amazon.com/step-functions/pricing/ — Standard workflows, every retry billed as a transition. */
  stepFunctionsPerTransition: 0.025 / 1000,
  /** https://aws.amazon.com/lambda/pricing/ — Arm (serverless.yml: architecture arm64), first tier. */
  lambdaPerGbSecondArm: 0.0000133334,
  lambdaPerGbSecondX86: 0.0000166667,
  /** https://aws.amazon.com/lambda/pricing/ — per request, either architecture. */
  lambdaPerRequest: 0.2 / 1_000_000,
  /** https://aws.amazon.com/eventbridge/pricing/ — custom events put on a bus, per 64 KB chunk. */
  eventBridgePerEvent: 1 / 1_000_000,
  /** https://aws.amazon.com/cloudwatch/pricing/ — Logs ingestion (Standard class; Lambda's vended-logs first tier). */
  cloudWatchLogsPerGb: 0.5,
  sources: [
    'https://aws.amazon.com/step-functions/pricing/',
    'https://aws.amazon.com/lambda/pricing/',
    'https://aws.amazon.com/eventbridge/pricing/',
    'https://aws.amazon.com/cloudwatch/pricing/',
  ],
} as const;

/**
 * Bytes Lambda itself writes to CloudWatch Logs per invocation, beside the function's own lines: the
 * START, END and REPORT lines (text format, e.g. `REPORT RequestId: … Duration: 812.35 ms Billed Duration:
 * 813 ms Memory Size: 512 MB Max Memory Used: 121 MB`) — about 60 + 50 + 150 bytes. The only estimated
 * part of the bill: the embedded run has no Lambda platform to write them.
 */
export const LAMBDA_PLATFORM_LOG_BYTES = 260;
