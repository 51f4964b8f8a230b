import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePattern, matchesPattern } from '../../../lib/bus/event-pattern.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';

/** The EventBridge user guide's example EC2 event (content filtering pages), with a few fields added. */
const EC2_EVENT = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: {
    'instance-id': 'i-1234567890abcdef0',
    state: 'terminated',
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    'source-ip': '10.0.0.33',
    'ipv6-source': '2001:db8:1234:1a00::5',
    FileName: 'image.PNG',
    'file-path': '/usr/lib/node',
    count: 0,
    enabled: false,
    owner: null,
    empty: '',
    tags: ['blue', 'prod', 'eu'],
    employees: [
      { firstName: 'John', lastName: 'Doe' },
      { firstName: 'Anna', lastName: 'Smith' },
      { firstName: 'Peter', lastName: 'Jones' },
    ],
    nested: { c1: 100 },
  },
};

const detail = (fields: Record<string, unknown>) => ({ detail: fields });

const MATCHING: [string, unknown][] = [
  ['exact top-level values', { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'] }],
  ['any of several values', { source: ['aws.fargate', 'aws.ec2'] }],
  ['a nested field', detail({ state: ['terminated'] })],
  ['a number', detail({ 'c-count': [5] })],
  ['a number written another way', detail({ 'x-limit': [3.018e2] })],
  ['false', detail({ enabled: [false] })],
  ['null', detail({ owner: [null] })],
  ['an empty string', detail({ empty: [''] })],
  ['an array in the event: any element', detail({ tags: ['prod'] })],
  ['resources array', { resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'] }],
  ['prefix', { time: [{ prefix: '2017-12-22' }] }],
  ['prefix ignoring case', { source: [{ prefix: { 'equals-ignore-case': 'AWS.E' } }] }],
  ['suffix', detail({ FileName: [{ suffix: '.PNG' }] })],
  ['suffix ignoring case', detail({ FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] })],
  ['equals-ignore-case', detail({ state: [{ 'equals-ignore-case': 'TERMINATED' }] })],
  ['anything-but a string', detail({ state: [{ 'anything-but': 'initializing' }] })],
  ['anything-but a number', detail({ 'x-limit': [{ 'anything-but': 123 }] })],
  ['anything-but a list of strings', detail({ state: [{ 'anything-but': ['stopped', 'overloaded'] }] })],
  ['anything-but a list of numbers', detail({ 'x-limit': [{ 'anything-but': [100, 200, 300] }] })],
  ['anything-but a prefix', detail({ state: [{ 'anything-but': { prefix: 'init' } }] })],
  ['anything-but a suffix', detail({ FileName: [{ 'anything-but': { suffix: '.png' } }] })],
  [
    'anything-but ignoring case',
    detail({ state: [{ 'anything-but': { 'equals-ignore-case': ['INITIALIZING', 'Stopped'] } }] }),
  ],
  ['anything-but a wildcard', detail({ 'file-path': [{ 'anything-but': { wildcard: '*/bin/*' } }] })],
  ['anything-but on an array: some element differs', detail({ tags: [{ 'anything-but': 'prod' }] })],
  ['numeric range', detail({ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] })],
  ['numeric upper bound only', detail({ 'd-count': [{ numeric: ['<', 10] }] })],
  ['numeric equals', detail({ 'x-limit': [{ numeric: ['=', 3.018e2] }] })],
  ['numeric bounds in either order', detail({ 'c-count': [{ numeric: ['<', 6, '>=', 5] }] })],
  ['numeric zero', detail({ count: [{ numeric: ['>=', 0] }] })],
  ['IPv4 cidr', detail({ 'source-ip': [{ cidr: '10.0.0.0/24' }] })],
  ['IPv4 cidr /8', detail({ 'source-ip': [{ cidr: '10.0.0.0/8' }] })],
  ['IPv4 single address', detail({ 'source-ip': [{ cidr: '10.0.0.33' }] })],
  ['IPv6 cidr', detail({ 'ipv6-source': [{ cidr: '2001:db8:1234:1a00::/64' }] })],
  ['exists true', detail({ 'c-count': [{ exists: true }] })],
  ['exists true on null', detail({ owner: [{ exists: true }] })],
  ['exists false', detail({ 'not-there': [{ exists: false }] })],
  ['exists false on an object (not a leaf)', detail({ nested: [{ exists: false }] })],
  ['wildcard', { source: [{ wildcard: 'aws.*' }] }],
  ['wildcard in the middle', detail({ 'file-path': [{ wildcard: '/usr/*/node' }] })],
  ['wildcard matching an empty run', detail({ 'file-path': [{ wildcard: '/usr/lib/node*' }] })],
  ['an array of objects: fields of one element', detail({ employees: { firstName: ['Anna'], lastName: ['Smith'] } })],
  ['nested object field', detail({ nested: { c1: [100] } })],
  [
    '$or',
    {
      source: ['aws.ec2'],
      $or: [{ 'detail-type': ['nope'] }, { detail: { state: ['terminated'] } }],
    },
  ],
  [
    '$or nested with an AND inside',
    detail({
      $or: [{ 'c-count': [1] }, { 'd-count': [3], state: ['terminated'], $or: [{ count: [0] }, { enabled: [true] }] }],
    }),
  ],
  [
    'the documented complex example',
    {
      time: [{ prefix: '2017-12-22' }],
      detail: {
        state: [{ 'anything-but': 'initializing' }],
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ 'anything-but': [100, 200, 300] }],
        'source-ip': [{ cidr: '10.0.0.0/8' }],
      },
    },
  ],
  ['a value or absent', detail({ missing: ['x', { exists: false }] })],
  ['JSON text', JSON.stringify({ source: ['aws.ec2'] })],
];

const NOT_MATCHING: [string, unknown][] = [
  ['another value', { source: ['aws.s3'] }],
  ['a missing field', detail({ 'not-there': ['x'] })],
  ['a string against a number', detail({ 'c-count': ['5'] })],
  ['a number against a string', detail({ state: [5] })],
  ['case differs', detail({ state: ['TERMINATED'] })],
  ['null against a string', detail({ state: [null] })],
  ['false against 0', detail({ count: [false] })],
  ['an empty string against null', detail({ owner: [''] })],
  ['null against an empty string', detail({ empty: [null] })],
  ['prefix on a number', detail({ 'c-count': [{ prefix: '5' }] })],
  ['prefix too long', { time: [{ prefix: '2017-12-23' }] }],
  ['suffix case-sensitive', detail({ FileName: [{ suffix: '.png' }] })],
  ['equals-ignore-case on another word', detail({ state: [{ 'equals-ignore-case': 'terminate' }] })],
  ['anything-but the value', detail({ state: [{ 'anything-but': 'terminated' }] })],
  ['anything-but in a list', detail({ state: [{ 'anything-but': ['stopped', 'terminated'] }] })],
  ['anything-but a prefix it has', detail({ state: [{ 'anything-but': { prefix: 'term' } }] })],
  [
    'anything-but a suffix ignoring case',
    detail({ FileName: [{ 'anything-but': { 'equals-ignore-case': 'IMAGE.png' } }] }),
  ],
  ['anything-but a wildcard it matches', detail({ 'file-path': [{ 'anything-but': { wildcard: '*/lib/*' } }] })],
  ['anything-but on a missing field', detail({ 'not-there': [{ 'anything-but': 'x' }] })],
  ['anything-but every element of an array', detail({ tags: [{ 'anything-but': ['blue', 'prod', 'eu'] }] })],
  ['numeric out of range', detail({ 'c-count': [{ numeric: ['>', 5] }] })],
  ['numeric on a string', detail({ state: [{ numeric: ['>', 0] }] })],
  ['numeric on a numeric string', detail({ 'source-ip': [{ numeric: ['>', 0] }] })],
  ['cidr outside', detail({ 'source-ip': [{ cidr: '10.0.1.0/24' }] })],
  ['cidr of the other family', detail({ 'source-ip': [{ cidr: '::/0' }] })],
  ['cidr on a non-address', detail({ state: [{ cidr: '0.0.0.0/0' }] })],
  ['exists true on a missing field', detail({ 'not-there': [{ exists: true }] })],
  ['exists true on an object (not a leaf)', detail({ nested: [{ exists: true }] })],
  ['exists false on a present field', detail({ state: [{ exists: false }] })],
  ['wildcard without a match', { source: [{ wildcard: 'aws.s*' }] }],
  ['wildcard escaped star is literal', { source: [{ wildcard: 'aws\\*' }] }],
  ['fields from two elements of one array', detail({ employees: { firstName: ['Anna'], lastName: ['Jones'] } })],
  ['$or with no matching alternative', { $or: [{ source: ['x'] }, { 'detail-type': ['y'] }] }],
  ['a nested object where the event has a string', detail({ state: { inner: ['x'] } })],
];

describe('event patterns: documented matches', () => {
  for (const [name, pattern] of MATCHING) {
    it(`matches: ${name}`, () => assert.equal(matchesPattern(pattern, EC2_EVENT), true));
  }
  for (const [name, pattern] of NOT_MATCHING) {
    it(`does not match: ${name}`, () => assert.equal(matchesPattern(pattern, EC2_EVENT), false));
  }
});

describe('event patterns: details', () => {
  it('wildcard escapes: \\* is a star and \\\\ a backslash', () => {
    assert.equal(matchesPattern({ v: [{ wildcard: 'a\\*b*' }] }, { v: 'a*bcd' }), true);
    assert.equal(matchesPattern({ v: [{ wildcard: 'a\\*b*' }] }, { v: 'axbcd' }), false);
    assert.equal(matchesPattern({ v: [{ wildcard: 'c:\\\\*' }] }, { v: 'c:\\temp' }), true);
    assert.equal(matchesPattern({ v: [{ wildcard: '*' }] }, { v: '' }), true);
    assert.equal(matchesPattern({ v: [{ wildcard: 'a.c' }] }, { v: 'abc' }), false, 'regex characters are literal');
  });

  it('IPv6 forms: compressed, full, IPv4-mapped', () => {
    const pattern = { ip: [{ cidr: '2001:db8::/32' }] };
    assert.equal(matchesPattern(pattern, { ip: '2001:0db8:0000:0000:0000:0000:0000:0001' }), true);
    assert.equal(matchesPattern(pattern, { ip: '2001:db9::1' }), false);
    assert.equal(matchesPattern({ ip: [{ cidr: '::ffff:10.0.0.0/120' }] }, { ip: '::ffff:10.0.0.7' }), true);
    assert.equal(matchesPattern({ ip: [{ cidr: '::/0' }] }, { ip: '::1' }), true);
    assert.equal(matchesPattern({ ip: [{ cidr: '0.0.0.0/0' }] }, { ip: '255.255.255.255' }), true);
  });

  it('numeric bounds: open and closed ends', () => {
    const range = (n: number, bounds: unknown[]) => matchesPattern({ n: [{ numeric: bounds }] }, { n });
    assert.equal(range(0, ['>', 0]), false);
    assert.equal(range(0, ['>=', 0]), true);
    assert.equal(range(5, ['<', 5]), false);
    assert.equal(range(5, ['<=', 5]), true);
    assert.equal(range(-5e9, ['>=', -5e9, '<=', 5e9]), true);
    assert.equal(range(5e9 + 1, ['>=', -5e9, '<=', 5e9]), false);
    assert.equal(range(6e9, ['>', 0]), false, 'beyond the numeric range nothing compares');
    assert.equal(matchesPattern({ n: [6e9] }, { n: 6e9 }), true, 'exact match still works');
  });

  it('deeply nested arrays of arrays of objects', () => {
    const event = { a: [[{ b: 'x' }], [{ b: 'y', c: [[1, 2], [3]] }]] };
    assert.equal(matchesPattern({ a: { b: ['y'], c: [3] } }, event), true);
    assert.equal(matchesPattern({ a: { b: ['x'], c: [3] } }, event), false);
  });

  it('a non-object event matches only exists:false patterns', () => {
    assert.equal(matchesPattern({ a: [{ exists: false }] }, 'text'), true);
    assert.equal(matchesPattern({ a: ['x'] }, null), false);
  });

  it('"$or" is an ordinary field name when its value is an object or a list of operators', () => {
    assert.equal(matchesPattern({ $or: { a: ['x'] } }, { $or: { a: 'x' } }), true);
    assert.equal(matchesPattern({ $or: [{ prefix: 'ab' }, { suffix: 'z' }] }, { $or: 'abc' }), true);
    assert.equal(matchesPattern({ $or: [{ prefix: 'ab' }, { suffix: 'z' }] }, { other: 'abc' }), false);
  });

  it('does not read inherited properties', () => {
    assert.equal(matchesPattern({ toString: [{ exists: true }] }, {}), false);
  });
});

const INVALID: [string, unknown, string, RegExp][] = [
  ['not an object', ['source'], '', /JSON object/],
  ['not JSON text', '{source:', '', /not valid JSON/],
  ['an empty pattern', {}, '', /empty object/],
  ['a bare string value', { source: 'aws.ec2' }, 'source', /array of values/],
  ['an empty value list', { source: [] }, 'source', /empty arrays/],
  ['a nested array', { source: [['a']] }, 'source[0]', /arrays do not nest/],
  ['an unknown operator', detail({ state: [{ begins: 'x' }] }), 'detail.state[0]', /unknown operator "begins"/],
  [
    'two operators in one object',
    detail({ state: [{ prefix: 'a', suffix: 'b' }] }),
    'detail.state[0]',
    /exactly one key/,
  ],
  ['prefix with a number', detail({ state: [{ prefix: 5 }] }), 'detail.state[0].prefix', /string/],
  ['prefix with a bad option', { s: [{ prefix: { 'ignore-case': 'a' } }] }, 's[0].prefix', /equals-ignore-case/],
  ['numeric without array', detail({ n: [{ numeric: 5 }] }), 'detail.n[0].numeric', /non-empty array/],
  ['numeric with a bad operator', { n: [{ numeric: ['!=', 5] }] }, 'n[0].numeric', /unknown operator "!="/],
  ['numeric with two lower bounds', { n: [{ numeric: ['>', 1, '>=', 2] }] }, 'n[0].numeric', /more than one lower/],
  ['numeric inverted range', { n: [{ numeric: ['>', 5, '<', 1] }] }, 'n[0].numeric', /must be below/],
  ['numeric with a string', { n: [{ numeric: ['>', '5'] }] }, 'n[0].numeric', /followed by a number/],
  ['numeric beyond the limit', { n: [{ numeric: ['<', 6e9] }] }, 'n[0].numeric', /outside the range/],
  ['numeric = with a second bound', { n: [{ numeric: ['=', 1, '<', 5] }] }, 'n[0].numeric', /exactly one number/],
  ['numeric = after a bound', { n: [{ numeric: ['>', 1, '=', 5] }] }, 'n[0].numeric', /stands alone/],
  ['exists with a string', { n: [{ exists: 'true' }] }, 'n[0].exists', /true or false/],
  ['cidr not an address', { ip: [{ cidr: '10.0.0/8' }] }, 'ip[0].cidr', /not an IPv4 or IPv6/],
  ['cidr prefix too long', { ip: [{ cidr: '10.0.0.0/33' }] }, 'ip[0].cidr', /0 to 32/],
  ['cidr IPv6 prefix too long', { ip: [{ cidr: '::/129' }] }, 'ip[0].cidr', /0 to 128/],
  ['wildcard with consecutive stars', { s: [{ wildcard: 'a**b' }] }, 's[0].wildcard', /consecutive/],
  ['wildcard with a bad escape', { s: [{ wildcard: 'a\\b' }] }, 's[0].wildcard', /backslash/],
  ['wildcard with a trailing backslash', { s: [{ wildcard: 'a\\' }] }, 's[0].wildcard', /backslash/],
  [
    'anything-but a mixed list',
    { s: [{ 'anything-but': ['a', 1] }] },
    's[0].anything-but',
    /only strings or only numbers/,
  ],
  ['anything-but an empty list', { s: [{ 'anything-but': [] }] }, 's[0].anything-but', /non-empty/],
  ['anything-but a boolean', { s: [{ 'anything-but': true }] }, 's[0].anything-but', /string, a number/],
  [
    'anything-but numeric',
    { s: [{ 'anything-but': { numeric: ['>', 1] } }] },
    's[0].anything-but',
    /unknown operator "numeric"/,
  ],
  [
    'anything-but an empty prefix',
    { s: [{ 'anything-but': { prefix: '' } }] },
    's[0].anything-but.prefix',
    /not be empty/,
  ],
  [
    'anything-but wildcard list entry',
    { s: [{ 'anything-but': { wildcard: ['ok*', 'a**'] } }] },
    's[0].anything-but.wildcard[1]',
    /consecutive/,
  ],
  ['$or with one alternative', { $or: [{ a: ['x'] }] }, '$or', /at least two/],
  ['$or alternative broken', { $or: [{ a: ['x'] }, { b: [] }] }, '$or[1].b', /empty arrays/],
  ['null as a field pattern', detail({ x: null }), 'detail.x', /not null/],
];

describe('event patterns: validation', () => {
  for (const [name, pattern, path, message] of INVALID) {
    it(`refuses ${name}, naming ${path || 'the pattern'}`, () => {
      assert.throws(
        () => compilePattern(pattern),
        (error: unknown) => {
          assert.ok(error instanceof InvalidInput);
          assert.equal(error.problems.length, 1);
          assert.equal(error.problems[0]?.path, path);
          assert.match(error.problems[0]?.message ?? '', message);
          return true;
        },
      );
    });
  }
});
