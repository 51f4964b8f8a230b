/** The AWS bill of one evacuation (bench/lib/cost.ts) at the list prices in bench/lib/prices.ts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costOf, deployedLogBytes, lambdaMemoryMb } from '../../../bench/lib/cost.ts';
import { LAMBDA_PLATFORM_LOG_BYTES, PRICES } from '../../../bench/lib/prices.ts';

const arm512 = { architecture: 'arm64' as const, defaultMb: 512, byFunction: { pass: 512, admit: 1024 } };

describe('costOf', () => {
  it('bills every line per 1,000 evacuations: transitions, GB-seconds at each function memory, requests, events, logs', () => {
    const cost = costOf(
      {
        billedTransitions: 40,
        lambdaCalls: [
          { functionKey: 'pass', ms: 2000 },
          { functionKey: 'admit', ms: 999.2 },
        ],
        events: 10,
        functionLogBytes: 2 ** 20 - 2 * LAMBDA_PLATFORM_LOG_BYTES,
      },
      arm512,
    );
    // 0.5 GB × 2 s + 1 GB × 1 s (rounded up to the ms) = 2 GB-s.
    assert.equal(cost.gbSeconds, 2);
    assert.equal(cost.stepFunctions, 40 * PRICES.stepFunctionsPerTransition * 1000);
    assert.equal(cost.lambdaDuration, 2 * PRICES.lambdaPerGbSecondArm * 1000);
    assert.equal(cost.lambdaRequests, 2 * PRICES.lambdaPerRequest * 1000);
    assert.equal(cost.eventBridge, 10 * PRICES.eventBridgePerEvent * 1000);
    assert.equal(cost.logBytes, 2 ** 20);
    assert.equal(cost.logs, (1 / 1024) * PRICES.cloudWatchLogsPerGb * 1000);
    const sum = cost.stepFunctions + cost.lambdaDuration + cost.lambdaRequests + cost.eventBridge + cost.logs;
    assert.ok(Math.abs(cost.total - sum) < 1e-12);
    // 40 transitions alone: $1.00 per 1,000 evacuations.
    assert.ok(Math.abs(cost.stepFunctions - 1) < 1e-12);
  });

  it('x86 functions pay the x86 duration price', () => {
    const call = {
      billedTransitions: 0,
      lambdaCalls: [{ functionKey: 'pass', ms: 1000 }],
      events: 0,
      functionLogBytes: 0,
    };
    const x86 = costOf(call, { ...arm512, architecture: 'x86_64' });
    assert.equal(x86.lambdaDuration, 0.5 * PRICES.lambdaPerGbSecondX86 * 1000);
  });
});

describe('deployedLogBytes', () => {
  it('counts INFO and up and EMF lines, not debug lines', () => {
    const info = JSON.stringify({ level: 'INFO', message: 'evicting' });
    const debug = JSON.stringify({ level: 'DEBUG', message: 'detail' });
    const emf = JSON.stringify({ _aws: { CloudWatchMetrics: [] }, Evictions: 1 });
    const bytes = deployedLogBytes([info, debug, emf, 'not json', ''].join('\n'));
    assert.equal(bytes, info.length + 1 + emf.length + 1);
  });
});

describe('lambdaMemoryMb', () => {
  it('reads serverless.yml: every function at the provider memory, arm64', () => {
    const memory = lambdaMemoryMb();
    assert.equal(memory.architecture, 'arm64');
    assert.equal(memory.defaultMb, 512);
    assert.equal(memory.byFunction.pass, 512);
    assert.ok(Object.keys(memory.byFunction).length >= 10);
  });
});
