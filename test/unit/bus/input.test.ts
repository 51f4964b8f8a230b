import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileTargetInput, type DeliveryContext, MAX_INPUT_PATHS } from '../../../lib/bus/input.ts';
import { parseJsonPath } from '../../../lib/bus/json-path.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';

/** The example event of the EventBridge guide's "Input transformation" page, plus a few fields. */
const EVENT = {
  version: '0',
  id: '7bf73129-1428-4cd3-a780-95db273d1602',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2015-11-11T21:29:54Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111'],
  detail: {
    'instance-id': 'i-0123456789',
    state: 'RUNNING',
    count: 3,
    items: [{ id: 'a' }, { id: 'b' }],
    'a/b': 'slash',
    under_score: true,
  },
};

const CONTEXT: DeliveryContext = {
  ruleName: 'example',
  ruleArn: 'arn:aws:events:us-east-2:123456789012:rule/example',
  ingestionTime: '2015-11-11T21:29:55Z',
};

const PATHS = { timestamp: '$.time', instance: '$.detail.instance-id', state: '$.detail.state' };

const transform = (InputTemplate: string, InputPathsMap: Record<string, string> = PATHS) =>
  compileTargetInput({ inputTransformer: { InputPathsMap, InputTemplate } })(EVENT, CONTEXT);

describe('target input: the documented InputTransformer examples', () => {
  it('a simple string', () => {
    assert.equal(transform('"instance <instance> is in <state>"'), '"instance i-0123456789 is in RUNNING"');
  });

  it('a string with escaped quotes', () => {
    assert.equal(transform('"instance \\"<instance>\\" is in <state>"'), '"instance \\"i-0123456789\\" is in RUNNING"');
  });

  it('simple JSON: variables outside quotes become JSON values', () => {
    const out = transform('{\n  "instance" : <instance>,\n  "state": <state>\n}');
    assert.deepEqual(JSON.parse(out), { instance: 'i-0123456789', state: 'RUNNING' });
  });

  it('JSON with strings and variables', () => {
    const out = transform(
      '{"instance" : <instance>, "state": "<state>", "instanceStatus": "instance \\"<instance>\\" is in <state>"}',
    );
    assert.deepEqual(JSON.parse(out), {
      instance: 'i-0123456789',
      state: 'RUNNING',
      instanceStatus: 'instance "i-0123456789" is in RUNNING',
    });
  });

  it('JSON mixing variables and static information', () => {
    const out = transform('{"instance" : <instance>, "state": [ 9, <state>, true ], "Transformed" : "Yes"}');
    assert.deepEqual(JSON.parse(out), { instance: 'i-0123456789', state: [9, 'RUNNING', true], Transformed: 'Yes' });
  });

  it('reserved variables in JSON: rule ARN, rule name and the original event without detail', () => {
    const out = transform(
      '{"instance": <instance>, "ruleArn": <aws.events.rule-arn>, "ruleName": <aws.events.rule-name>, "originalEvent": <aws.events.event>, "at": <aws.events.event.ingestion-time>}',
    );
    const { detail: _detail, ...envelope } = EVENT;
    assert.deepEqual(JSON.parse(out), {
      instance: 'i-0123456789',
      ruleArn: CONTEXT.ruleArn,
      ruleName: 'example',
      originalEvent: envelope,
      at: CONTEXT.ingestionTime,
    });
  });

  it('the full event with <aws.events.event.json>', () => {
    assert.deepEqual(JSON.parse(transform('{"event": <aws.events.event.json>}', {})), { event: EVENT });
  });

  it('a reserved variable in a string', () => {
    assert.equal(transform('"<aws.events.rule-name> triggered"', {}), '"example triggered"');
  });

  it('numbers and booleans keep their type outside quotes and become text inside', () => {
    const out = transform('{"n": <n>, "b": <b>, "text": "<n>/<b>"}', {
      n: '$.detail.count',
      b: '$.detail.under_score',
    });
    assert.deepEqual(JSON.parse(out), { n: 3, b: true, text: '3/true' });
  });

  it('a path that finds nothing: null outside quotes, empty inside', () => {
    const out = transform('{"gone": <gone>, "text": "[<gone>]"}', { gone: '$.detail.nope' });
    assert.deepEqual(JSON.parse(out), { gone: null, text: '[]' });
  });

  it('text in angle brackets that names no variable stays as written', () => {
    assert.equal(transform('"a <b> c <state>"'), '"a <b> c RUNNING"');
  });

  it('extracted strings are not escaped (as EventBridge documents), so a quote can break the JSON', () => {
    const event = { ...EVENT, detail: { note: 'say "hi"' } };
    const out = compileTargetInput({
      inputTransformer: { InputPathsMap: { note: '$.detail.note' }, InputTemplate: '{"n": "<note>"}' },
    })(event, CONTEXT);
    assert.equal(out, '{"n": "say "hi""}');
    assert.throws(() => JSON.parse(out), SyntaxError);
  });
});

describe('target input: Input, InputPath and the default', () => {
  it('no setting passes the whole event', () => {
    assert.deepEqual(JSON.parse(compileTargetInput({})(EVENT, CONTEXT)), EVENT);
  });

  it('Input is passed verbatim', () => {
    assert.equal(compileTargetInput({ input: '{"fixed": [1, 2]}' })(EVENT, CONTEXT), '{"fixed": [1, 2]}');
  });

  it('InputPath picks a part of the event', () => {
    const pick = (inputPath: string) => JSON.parse(compileTargetInput({ inputPath })(EVENT, CONTEXT));
    assert.deepEqual(pick('$.detail'), EVENT.detail);
    assert.deepEqual(pick('$'), EVENT);
    assert.equal(pick('$.detail.instance-id'), 'i-0123456789');
    assert.equal(pick('$.resources[0]'), EVENT.resources[0]);
    assert.deepEqual(pick('$.detail.items[*].id'), ['a', 'b']);
    assert.deepEqual(pick('$.detail.items.*.id'), ['a', 'b']);
    assert.equal(pick('$.detail.a/b'), 'slash');
    assert.equal(pick('$.detail.nope'), null);
    assert.equal(pick('$.resources[5]'), null);
  });
});

describe('target input: validation names the field', () => {
  const refuses = (config: Parameters<typeof compileTargetInput>[0], path: string, message: RegExp) =>
    assert.throws(
      () => compileTargetInput(config),
      (error: unknown) => {
        assert.ok(error instanceof InvalidInput);
        assert.equal(error.problems[0]?.path, path);
        assert.match(error.problems[0]?.message ?? '', message);
        return true;
      },
    );

  it('refuses more than one of input, inputPath and inputTransformer', () => {
    refuses({ input: '{}', inputPath: '$' }, 'input, inputPath', /at most one/);
  });

  it('refuses Input that is not JSON', () => refuses({ input: '{nope' }, 'input', /valid JSON/));

  it('refuses a path in bracket notation or not starting with $', () => {
    refuses({ inputPath: "$['detail']" }, 'inputPath', /dot notation/);
    refuses({ inputPath: 'detail.state' }, 'inputPath', /must start with "\$"/);
    refuses({ inputPath: '$.detail..state' }, 'inputPath', /cannot read/);
  });

  it('refuses a missing template, reserved and malformed variable names, too many variables', () => {
    refuses({ inputTransformer: { InputTemplate: '' } }, 'inputTransformer.InputTemplate', /non-empty/);
    refuses(
      { inputTransformer: { InputPathsMap: { 'aws.events.rule-name': '$.x' }, InputTemplate: '<x>' } },
      'inputTransformer.InputPathsMap.aws.events.rule-name',
      /reserved/,
    );
    refuses(
      { inputTransformer: { InputPathsMap: { 'a b': '$.x' }, InputTemplate: '<x>' } },
      'inputTransformer.InputPathsMap.a b',
      /variable name/,
    );
    refuses(
      { inputTransformer: { InputPathsMap: { a: 'x' }, InputTemplate: '<a>' } },
      'inputTransformer.InputPathsMap.a',
      /must start with/,
    );
    const many = Object.fromEntries(Array.from({ length: MAX_INPUT_PATHS + 1 }, (_, i) => [`v${i}`, '$.id']));
    refuses(
      { inputTransformer: { InputPathsMap: many, InputTemplate: '<v0>' } },
      'inputTransformer.InputPathsMap',
      /at most 100/,
    );
  });
});

describe('JSON paths', () => {
  it('returns the same value for equivalent index and wildcard forms', () => {
    const doc = { a: [{ b: 1 }, { b: 2 }] };
    assert.equal(parseJsonPath('$.a[1].b').evaluate(doc), 2);
    assert.deepEqual(parseJsonPath('$.a[*].b').evaluate(doc), [1, 2]);
    assert.deepEqual(parseJsonPath('$.*').evaluate(doc), [doc.a]);
    assert.equal(parseJsonPath('$.a.b').evaluate(doc), undefined, 'no implicit array flattening without a wildcard');
  });
});
