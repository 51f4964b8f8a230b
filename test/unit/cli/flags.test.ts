/** The declared command line: kubectl's conventions, "did you mean", typed values. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../cli/command.ts';
import {
  expectPositionals,
  type FlagSpec,
  flagValue,
  integerFlag,
  isOn,
  numberFlag,
  parseCommandLine,
} from '../../../cli/flags.ts';
import { closest, editDistance } from '../../../cli/suggest.ts';

const SPECS: readonly FlagSpec[] = [
  { name: 'force', kind: 'switch' },
  { name: 'grace-period', kind: 'value', value: 'SECONDS' },
  { name: 'log-level', kind: 'value', choices: ['debug', 'info'] },
  { name: 'request-id', kind: 'value' },
];

function refusal(argv: string[]): string {
  try {
    parseCommandLine(argv, SPECS);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error.message;
  }
  assert.fail(`${argv.join(' ')} was accepted`);
}

describe('parseCommandLine', () => {
  it('takes a one-letter alias as kubectl does (-o json, -ojson, -o=json, -wo json) and refuses a long flag with one dash', () => {
    const specs: readonly FlagSpec[] = [
      { name: 'output', kind: 'value', short: 'o', choices: ['json', 'wide'] },
      { name: 'watch', kind: 'switch', short: 'w' },
    ];
    for (const argv of [['-o', 'json'], ['-ojson'], ['-o=json'], ['--output=json']]) {
      assert.equal(flagValue(parseCommandLine(argv, specs), 'output'), 'json', argv.join(' '));
    }
    const grouped = parseCommandLine(['-wo', 'wide', 'node-1'], specs);
    assert.deepEqual(
      [isOn(grouped, 'watch'), flagValue(grouped, 'output'), grouped.positional],
      [true, 'wide', ['node-1']],
    );
    assert.throws(
      () => parseCommandLine(['-output', 'json'], specs),
      /unknown flag -output \(did you mean --output\?\)/,
    );
    assert.throws(() => parseCommandLine(['-o', 'xml'], specs), /--output: must be one of json, wide, not "xml"/);
  });

  it('reads switches (also =true/=false), values as one or two words, negative values, and -- ', () => {
    const parsed = parseCommandLine(
      ['node-1', '--force=false', '--grace-period', '-1', '--request-id=a=b', '--force', '--', '--grace-period'],
      SPECS,
    );
    assert.deepEqual(parsed.positional, ['node-1', '--grace-period']);
    assert.equal(flagValue(parsed, 'grace-period'), '-1');
    assert.equal(flagValue(parsed, 'request-id'), 'a=b');
    assert.equal(isOn(parsed, 'force'), true, 'the last one wins');
  });

  it('suggests the flag meant, and names single-dash flags whole', () => {
    assert.equal(refusal(['--gracee-period', '3']), 'unknown flag --gracee-period (did you mean --grace-period?)');
    assert.equal(refusal(['--forse']), 'unknown flag --forse (did you mean --force?)');
    assert.equal(refusal(['-force']), 'unknown flag -force (did you mean --force?)');
    assert.equal(refusal(['--zzzzzz']), 'unknown flag --zzzzzz');
    assert.equal(refusal(['-q']), 'unknown flag -q (flags are written with two dashes)');
  });

  it('refuses an empty value, a missing value, a bad switch value and a value not among the choices', () => {
    assert.equal(refusal(['--request-id=']), '--request-id: the value is empty');
    assert.equal(refusal(['--grace-period']), '--grace-period needs a value (SECONDS)');
    assert.equal(refusal(['--force=yes']), '--force: must be true or false, not "yes"');
    assert.equal(
      refusal(['--log-level=debgu']),
      '--log-level: must be one of debug, info, not "debgu" (did you mean debug?)',
    );
  });

  it('counts positionals', () => {
    const parsed = (argv: string[]) => parseCommandLine(argv, SPECS);
    assert.deepEqual(expectPositionals(parsed(['a']), ['NODE']), ['a']);
    assert.throws(() => expectPositionals(parsed([]), ['NODE']), /^UsageError: missing NODE$/);
    assert.throws(() => expectPositionals(parsed(['a', 'b', 'c']), ['NODE']), /unexpected arguments "b" "c"/);
  });
});

describe('typed values', () => {
  it('integers are decimal only (no 0x10, 1e3, blanks)', () => {
    assert.equal(integerFlag('port', '8080', { min: 0, max: 65535 }), 8080);
    for (const bad of ['0x10', '1e3', ' 7', '7.0', ''])
      assert.throws(() => integerFlag('port', bad), /--port: must be a whole number/);
    assert.throws(
      () => integerFlag('port', '70000', { min: 0, max: 65535 }),
      /--port: must be between 0 and 65535, not 70000/,
    );
  });

  it('numbers are decimal, within their range, and the message states the range', () => {
    assert.equal(numberFlag('speed', '0.5', { above: 0, max: 1000 }), 0.5);
    assert.throws(
      () => numberFlag('speed', '0', { above: 0, max: 1000 }),
      /--speed: must be greater than 0 and at most 1000, not 0/,
    );
    assert.throws(() => numberFlag('speed', 'Infinity', { above: 0, max: 1000 }), /--speed: must be a number/);
  });
});

describe('did you mean', () => {
  it('measures swaps as one edit and ignores words too far away', () => {
    assert.equal(editDistance('evacaute', 'evacuate'), 1);
    assert.equal(closest('evacaute', ['evacuate', 'restore']), 'evacuate');
    assert.equal(closest('res', ['evacuate', 'restore']), 'restore', 'a unique prefix');
    assert.equal(closest('xyz', ['evacuate', 'restore']), undefined);
  });
});
