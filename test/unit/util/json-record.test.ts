import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ADMISSION_QUEUE_FORMAT } from '../../../lib/admission/records.ts';
import { LEDGER_FORMAT } from '../../../lib/node/ledger.ts';
import {
  decodeRecord,
  type RecordFormat,
  readJsonRecord,
  VERSION_KEY,
  writeJsonRecord,
} from '../../../lib/util/json-record.ts';
import { OWNER_FORMAT } from '../../../lib/workflow/owner-record.ts';

interface Claim {
  readonly who: string;
  readonly at: string;
}

const V1: RecordFormat<Claim> = { what: 'claim (test)', versions: [z.object({ who: z.string(), at: z.string() })] };
/** Version 2 stores `by` instead of `who`; its schema reads it into the same shape. */
const V2: RecordFormat<Claim> = {
  what: 'claim (test)',
  versions: [V1.versions[0], z.object({ by: z.string(), at: z.string() }).transform(({ by, at }) => ({ who: by, at }))],
};

describe('readJsonRecord', () => {
  it('absent: no text', () => {
    assert.deepEqual(readJsonRecord(undefined, V1), { status: 'absent' });
    assert.deepEqual(readJsonRecord('', V1), { status: 'absent' });
  });

  it('ok: an unstamped record is version 1', () => {
    assert.deepEqual(readJsonRecord('{"who":"a","at":"t"}', V1), {
      status: 'ok',
      value: { who: 'a', at: 't' },
      version: 1,
    });
  });

  it('unreadable, with a reason naming the record: not JSON, null, the wrong shape', () => {
    const notJson = readJsonRecord('{not json', V1);
    assert.equal(notJson.status, 'unreadable');
    assert.match(notJson.status === 'unreadable' ? notJson.reason : '', /^claim \(test\): not JSON/);
    assert.deepEqual(readJsonRecord('null', V1), { status: 'unreadable', reason: 'claim (test): null' });
    const wrong = readJsonRecord('{"who":3,"at":"t"}', V1);
    assert.match(wrong.status === 'unreadable' ? wrong.reason : '', /^claim \(test\): who: /);
  });

  it('reads each version by its own schema into the current shape', () => {
    const stamped = JSON.stringify({ [VERSION_KEY]: 2, by: 'b', at: 't' });
    assert.deepEqual(readJsonRecord(stamped, V2), { status: 'ok', value: { who: 'b', at: 't' }, version: 2 });
    assert.deepEqual(readJsonRecord('{"who":"a","at":"t"}', V2), {
      status: 'ok',
      value: { who: 'a', at: 't' },
      version: 1,
    });
  });

  it('a version newer than this build knows is unreadable, never guessed at', () => {
    const stamped = JSON.stringify({ [VERSION_KEY]: 2, by: 'b', at: 't' });
    assert.deepEqual(readJsonRecord(stamped, V1), {
      status: 'unreadable',
      reason: 'claim (test): written in format version 2; this drainbridge reads up to 1',
    });
    const bogus = readJsonRecord(JSON.stringify({ [VERSION_KEY]: 'two', who: 'a', at: 't' }), V1);
    assert.equal(bogus.status, 'unreadable');
  });
});

describe('writeJsonRecord', () => {
  it('writes version 1 unstamped, exactly as before versions existed', () => {
    assert.equal(writeJsonRecord({ who: 'a', at: 't' }, V1), '{"who":"a","at":"t"}');
  });

  it('stamps later versions', () => {
    const text = writeJsonRecord({ by: 'b', at: 't' } as unknown as Claim, V2);
    assert.equal(JSON.parse(text)[VERSION_KEY], 2);
  });
});

describe('decodeRecord', () => {
  it('decodes a parsed value; undefined and null are absent', () => {
    assert.deepEqual(decodeRecord(undefined, V1), { status: 'absent' });
    assert.deepEqual(decodeRecord({ who: 'a', at: 't' }, V1), {
      status: 'ok',
      value: { who: 'a', at: 't' },
      version: 1,
    });
  });
});

const T = '2026-01-02T03:04:05.000Z';

describe('the persisted records', () => {
  it('the ledger keeps fields it does not know (a newer writer’s), and refuses a hold without its fields', () => {
    const text = JSON.stringify({ holds: { r: { requester: 'a', origin: 'manual', since: T } }, released: {}, x: 1 });
    const read = readJsonRecord(text, LEDGER_FORMAT);
    assert.equal(read.status, 'ok');
    assert.equal((read.status === 'ok' ? (read.value as unknown as { x: number }) : { x: 0 }).x, 1);
    const damaged = readJsonRecord(JSON.stringify({ holds: { r: { requester: 'a' } }, released: {} }), LEDGER_FORMAT);
    assert.match(
      damaged.status === 'unreadable' ? damaged.reason : '',
      /^ledger \(node annotation drainbridge\.io\/ledger\): holds\.r\.origin/,
    );
  });

  it('the admission queue and the owner claim', () => {
    const queue = { 'req-1': { node: 'n', since: T, seen: T } };
    assert.deepEqual(readJsonRecord(JSON.stringify(queue), ADMISSION_QUEUE_FORMAT), {
      status: 'ok',
      value: queue,
      version: 1,
    });
    assert.equal(readJsonRecord('[1]', ADMISSION_QUEUE_FORMAT).status, 'unreadable');
    assert.deepEqual(readJsonRecord(`{"executionId":"e","seen":"${T}","extra":1}`, OWNER_FORMAT), {
      status: 'ok',
      value: { executionId: 'e', seen: T },
      version: 1,
    });
    assert.equal(readJsonRecord('{"executionId":"e"}', OWNER_FORMAT).status, 'unreadable');
    // Dates are checked: a date that does not parse would be read as "long ago" and expire the entry.
    assert.equal(
      readJsonRecord(JSON.stringify({ 'req-1': { node: 'n', since: 't', seen: T } }), ADMISSION_QUEUE_FORMAT).status,
      'unreadable',
    );
  });
});
