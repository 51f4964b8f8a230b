/**
 * The Azure Scheduled Events client's timeouts: Microsoft documents that the first request for the
 * document can take up to two minutes (Scheduled Events is enabled by it), so document reads wait
 * `firstReadTimeoutMs` until one has been answered, and the agent's short timeout after that. Against a
 * metadata server that answers every request slowly (real HTTP on 127.0.0.1).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AzureScheduledEventsClient } from '../../lib/sources/clouds/azure/client.ts';
import { FakeHttpServer } from '../../sim/metadata/http.ts';

const ANSWER_MS = 600;
let server: FakeHttpServer;
before(async () => {
  server = await FakeHttpServer.start(async (_request, signal) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ANSWER_MS);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
    return { status: 200, body: JSON.stringify({ DocumentIncarnation: 1, Events: [] }) };
  });
});
after(() => server.stop());

const client = (firstReadTimeoutMs?: number) =>
  new AzureScheduledEventsClient({
    baseUrl: server.url,
    apiVersion: '2020-07-01',
    timeoutMs: 200,
    ...(firstReadTimeoutMs ? { firstReadTimeoutMs } : {}),
    retry: { attempts: 1 },
  });

describe('Azure Scheduled Events client: the first read may take long, the next ones may not', () => {
  it('the first read waits up to firstReadTimeoutMs; once answered, reads time out after timeoutMs', async () => {
    const azure = client(5_000);
    assert.match(await azure.fetchDocument(), /"DocumentIncarnation":1/);
    await assert.rejects(azure.fetchDocument(), /no answer/);
  });

  it('without a first-read timeout, the first read has the short one', async () => {
    await assert.rejects(client().fetchDocument(), /no answer/);
  });

  it('a first read that failed does not end the wait: the next read waits long again', async () => {
    let calls = 0;
    const flaky = await FakeHttpServer.start(async (_request, signal) => {
      calls += 1;
      if (calls === 1) return { status: 503, body: 'enabling' };
      await new Promise((resolve) => setTimeout(resolve, signal.aborted ? 0 : ANSWER_MS));
      return { status: 200, body: JSON.stringify({ DocumentIncarnation: 1, Events: [] }) };
    });
    try {
      const azure = new AzureScheduledEventsClient({
        baseUrl: flaky.url,
        apiVersion: '2020-07-01',
        timeoutMs: 200,
        firstReadTimeoutMs: 5_000,
        retry: { attempts: 1 },
      });
      await assert.rejects(azure.fetchDocument(), /HTTP 503/);
      assert.match(await azure.fetchDocument(), /Events/, 'still the long wait: nothing was answered yet');
    } finally {
      await flaky.stop();
    }
  });
});
