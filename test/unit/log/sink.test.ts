/** Where log lines go: stdout on Lambda, the configured sink (off, stderr or a file) everywhere else. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { createLogger } from '../../../lib/log/logger.ts';
import { registerSecret } from '../../../lib/log/redact.ts';
import {
  configureLogging,
  formatText,
  logSettingsFromEnvironment,
  resolveLogSettings,
  routeToSink,
  SINK_CONSOLE,
} from '../../../lib/log/sink.ts';

const NAMES = { level: '--log-level', format: '--log-format', file: '--log-file' };

function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'drainbridge-log-')), 'log');
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean);
}

describe('log settings', () => {
  it('are off by default; a log file alone means info as JSON', () => {
    assert.deepEqual(resolveLogSettings({}, NAMES).settings, { level: 'off', format: 'text' });
    assert.deepEqual(resolveLogSettings({ file: '/tmp/x' }, NAMES).settings, {
      level: 'info',
      format: 'json',
      file: '/tmp/x',
    });
    assert.deepEqual(logSettingsFromEnvironment({ DRAINBRIDGE_LOG_LEVEL: 'WARN' }), { level: 'warn', format: 'text' });
  });

  it('name the flag or variable of every bad value', () => {
    const { problems } = resolveLogSettings({ level: 'loud', format: 'xml', file: ' ' }, NAMES);
    assert.deepEqual(
      problems.map((p) => p.path),
      ['--log-file', '--log-level', '--log-format'],
    );
    assert.match(problems[1]?.message ?? '', /must be one of debug, info, warn, error, off, not "loud"/);
  });
});

describe('formatText', () => {
  it('renders a Powertools line as time, level, service, message and fields, without Lambda noise', () => {
    const line = JSON.stringify({
      level: 'WARN',
      message: 'evacuation failed',
      timestamp: '2026-01-01T00:00:00.000Z',
      service: 'drainbridge.failEvacuation',
      cold_start: false,
      function_memory_size: '512',
      requestId: 'r-1',
      reason: 'two words',
    });
    assert.equal(
      formatText(line),
      '2026-01-01T00:00:00.000Z WARN drainbridge.failEvacuation: evacuation failed requestId=r-1 reason="two words"',
    );
    assert.equal(formatText('{"_aws":{}}'), '{"_aws":{}}');
    assert.equal(formatText('not json'), 'not json');
  });
});

describe('routing Powertools to the sink', () => {
  it('writes a logger’s lines at or above the level to the file, redacted, and nothing below it', () => {
    const file = tempFile();
    configureLogging({ level: 'warn', format: 'json', file });
    registerSecret('hunter2-token-value');
    const logger = createLogger('test.sink');
    logger.info('not written');
    logger.warn('written', { detail: 'uses hunter2-token-value' });
    logger.error('also written');
    const written = lines(file).map((l) => JSON.parse(l) as { level: string; message: string; detail?: string });
    assert.deepEqual(
      written.map((w) => [w.level, w.message]),
      [
        ['WARN', 'written'],
        ['ERROR', 'also written'],
      ],
    );
    assert.equal(written[0]?.detail, 'uses [REDACTED]');
  });

  it('keeps working when Powertools resets the level at an invocation (the sink filters)', () => {
    const file = tempFile();
    configureLogging({ level: 'debug', format: 'text', file });
    const logger = createLogger('test.reset');
    logger.refreshSampleRateCalculation();
    logger.refreshSampleRateCalculation();
    logger.debug('debug line');
    assert.match(lines(file)[0] ?? '', /DEBUG test\.reset: debug line$/);
  });

  it('sends metrics’ EMF documents at debug', () => {
    const file = tempFile();
    configureLogging({ level: 'debug', format: 'json', file });
    const metrics = routeToSink(new Metrics({ namespace: 'test', serviceName: 'test' }), 'metrics');
    metrics.addMetric('Things', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    const emf = JSON.parse(lines(file)[0] ?? '{}') as { Things?: number };
    assert.equal(emf.Things, 1);
    const infoFile = tempFile();
    configureLogging({ level: 'info', format: 'json', file: infoFile });
    metrics.addMetric('Things', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    assert.deepEqual(lines(infoFile), [], 'not at info');
  });

  it('leaves Lambda’s stdout alone', () => {
    const logger = new Logger({ serviceName: 'lambda' });
    const before = (logger as unknown as { console: unknown }).console;
    routeToSink(logger, 'logger', { AWS_LAMBDA_FUNCTION_NAME: 'drainbridge-dev-admit' });
    assert.equal((logger as unknown as { console: unknown }).console, before);
    routeToSink(logger, 'logger', {});
    assert.equal((logger as unknown as { console: unknown }).console, SINK_CONSOLE);
  });
});
