/**
 * Found by the soak (issue 24): the node agent logged "reading the notices failed; trying again" with no
 * reason. It passed the reason under the key `message`, which Powertools Logger reserves and drops (it
 * warns 'The key "message" is a reserved key and will be dropped.'); the agent's tests used a recording
 * logger that kept every key. Here the agent logs through drainbridge's own logger (createLogger, as
 * `drainbridge forwarder --node-agent` does) to a JSON log file, and a malformed document and an
 * unreachable metadata service must each be logged with what went wrong.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger, type Logger } from '../../lib/log/logger.ts';
import { configureLogging, currentLogSettings } from '../../lib/log/sink.ts';
import type { AgentLogger } from '../../lib/sources/clouds/loop.ts';
import { FakeAzureMetadata } from '../../sim/metadata/index.ts';
import { type AgentCluster, AZURE_NODES, runAgent, startAgentCluster, testConfig } from '../sources/harness.ts';
import { waitUntil } from '../support/wait.ts';

let cluster: AgentCluster;
const settings = currentLogSettings();
const logFile = join(mkdtempSync(join(tmpdir(), 'drainbridge-agent-log-')), 'agent.log');

before(async () => {
  cluster = await startAgentCluster(AZURE_NODES);
  configureLogging({ level: 'debug', format: 'json', file: logFile });
});
after(async () => {
  configureLogging(settings);
  await cluster.stop();
});

function lines(): Record<string, unknown>[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** drainbridge's logger behind the agent's interface, as lib/sources/node-agent/node-agent.ts puts it. */
function asAgentLogger(logger: Logger): AgentLogger {
  return {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
}

const logged = (message: string) => lines().find((line) => line.message === message);

describe('fault injection: the node agent says why a read failed', () => {
  it('a malformed document and an unreachable metadata service are logged with their reason', async () => {
    const imds = await FakeAzureMetadata.start();
    imds.serveRaw('{"DocumentIncarnation": 1, "Events": [');
    const { agent } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-3',
        DRAINBRIDGE_AGENT_PROVIDER: 'azure',
        DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
      }),
      cluster.kube,
      { logger: asAgentLogger(createLogger('drainbridge-node-agent')) },
    );
    try {
      await waitUntil('the malformed document is logged', () => logged('malformed document: nothing published'));
      const malformed = logged('malformed document: nothing published') ?? {};
      assert.match(String(malformed.reason), /JSON|Unexpected end/i, JSON.stringify(malformed));
      await imds.server.stop();
      await waitUntil('the failed read is logged', () => logged('reading the notices failed; trying again'));
      const failed = logged('reading the notices failed; trying again') ?? {};
      assert.match(String(failed.reason), /\w/, `the reason is named: ${JSON.stringify(failed)}`);
      const dropped = lines().filter((line) => /is a reserved key and will be dropped/.test(String(line.message)));
      assert.deepEqual(dropped, [], 'no key of the agent dropped by the logger');
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });
});
