/** sim.faults: failing requests for a while, 410 on a resumed watch, dropped watch connections. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { waitUntil } from '../support/wait.ts';
import { api } from './helpers.ts';

async function firstLine(response: Response): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel().catch(() => undefined);
  return text.split('\n')[0] ?? '';
}

describe('fault injection', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulator({ scenario: 'small', tls: false });
  });
  after(async () => {
    await sim?.stop();
  });

  it('answers matching requests with 500 until healed; other users are not affected', async () => {
    const token = await sim.tokenFor('default/victim');
    const heal = sim.faults.failRequests({ user: 'system:serviceaccount:default:victim', resources: ['nodes'] });
    const failed = await api(sim, 'GET', '/api/v1/nodes', { token });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.reason, 'InternalError');
    assert.equal((await api(sim, 'GET', '/api/v1/nodes')).status, 200, 'the admin is not matched');
    heal();
    assert.notEqual((await api(sim, 'GET', '/api/v1/nodes', { token })).status, 500);
  });

  it('answers a watch resumed from a resourceVersion with a 410 Expired ERROR event', async () => {
    sim.faults.expireWatches({ resources: ['nodes'] });
    const response = await fetch(`${sim.url}/api/v1/nodes?watch=true&resourceVersion=1`, {
      headers: { authorization: `Bearer ${sim.adminToken}` },
    });
    const event = JSON.parse(await firstLine(response)) as { type: string; object: { code: number; reason: string } };
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
  });

  it('drops open watch connections', async () => {
    const response = await fetch(`${sim.url}/api/v1/nodes?watch=true`, {
      headers: { authorization: `Bearer ${sim.adminToken}` },
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    assert.ok(sim.faults.openWatches({ resources: ['nodes'] }) >= 1);
    assert.ok(sim.faults.dropWatches({ resources: ['nodes'] }) >= 1);
    let ending = 'open';
    while (ending === 'open') {
      ending = await reader.read().then(
        ({ done }) => (done ? 'ended' : 'open'),
        () => 'errored',
      );
    }
    assert.ok(['ended', 'errored'].includes(ending), 'the client sees the connection go');
    assert.equal(sim.faults.openWatches({ resources: ['nodes'] }), 0);
  });

  it('holds matching requests until released; a held request whose client leaves is dropped', async () => {
    const token = await sim.tokenFor('default/slow');
    const match = { user: 'system:serviceaccount:default:slow', verbs: ['list'], resources: ['nodes'] };
    const release = sim.faults.holdRequests(match);
    const held = api(sim, 'GET', '/api/v1/nodes', { token });
    await waitUntil('the list is held', () => sim.faults.heldRequests(match) === 1);
    assert.equal((await api(sim, 'GET', '/api/v1/nodes')).status, 200, 'the admin is not held');
    const gone = new AbortController();
    const abandoned = fetch(`${sim.url}/api/v1/nodes`, {
      headers: { authorization: `Bearer ${token}` },
      signal: gone.signal,
    }).catch(() => 'aborted');
    await waitUntil('the second list is held', () => sim.faults.heldRequests(match) === 2);
    gone.abort();
    assert.equal(await abandoned, 'aborted');
    await waitUntil('the abandoned list is dropped', () => sim.faults.heldRequests(match) === 1);
    release();
    // Held before authorization, answered after it: this account may not list nodes.
    assert.equal((await held).status, 403, 'answered once released');
    assert.equal(sim.faults.heldRequests(match), 0);
  });
});
