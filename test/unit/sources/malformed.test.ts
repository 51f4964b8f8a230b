/** Every malformed document is refused with a NoticeParseError naming the field (and no notice comes of it). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoticeParseError } from '../../../lib/sources/clouds/notice.ts';
import { parseNoticeDocument } from '../../../lib/sources/node-agent/parse.ts';
import { MALFORMED } from './malformed.ts';

function refusal(source: Parameters<typeof parseNoticeDocument>[0], body: string): NoticeParseError {
  let parsed: ReturnType<typeof parseNoticeDocument>;
  try {
    parsed = parseNoticeDocument(source, body, 'etag-1');
  } catch (error) {
    assert.ok(error instanceof NoticeParseError, `a NoticeParseError, not ${String(error)}`);
    return error;
  }
  assert.deepEqual(parsed.notices, [], 'no notice from a malformed event');
  assert.ok(parsed.rejected.length >= 1, 'the event is rejected');
  return parsed.rejected[parsed.rejected.length - 1] as NoticeParseError;
}

describe('malformed provider documents', () => {
  it('there are at least 20 variants across the three providers', () => {
    assert.ok(MALFORMED.length >= 20, `${MALFORMED.length} variants`);
    for (const provider of ['azure', 'aws', 'gcp']) {
      assert.ok(
        MALFORMED.some((c) => c.source.startsWith(provider)),
        `${provider} has variants`,
      );
    }
  });

  for (const c of MALFORMED) {
    it(`${c.name}: refused, naming it`, () => {
      const error = refusal(c.source, c.body);
      assert.equal(error.name, 'NoticeParseError');
      assert.equal(error.source, c.source);
      assert.ok(error.message.includes(c.names), `"${error.message}" names "${c.names}"`);
    });
  }

  it('a malformed event does not hide the valid ones next to it', () => {
    const body = JSON.stringify({
      DocumentIncarnation: 3,
      Events: [
        {
          EventId: 'a',
          EventStatus: 'Scheduled',
          EventType: 'Reboot',
          ResourceType: 'VirtualMachine',
          Resources: ['vm-0'],
          NotBefore: 'Mon, 19 Sep 2016 18:29:47 GMT',
        },
        { EventId: 'b', EventType: 'Reboot' },
      ],
    });
    const parsed = parseNoticeDocument('azure-scheduled-events', body);
    assert.deepEqual(
      parsed.notices.map((n) => n.eventId),
      ['a'],
    );
    assert.equal(parsed.rejected.length, 1);
    assert.match(parsed.rejected[0]?.message ?? '', /Events\[1\]\.Resources: is required/);
  });
});
