'use strict';

/**
 * What the CLI says about a mistyped command line: plain messages for negative numbers, "did you
 * mean" for a misspelt command or option, and a pointer to --help instead of the whole usage text.
 */

const assert = require('node:assert/strict');
const { parse, suggest } = require('../../gateway/cli/args');
const { nines } = require('../helpers/nines-cli');

const USAGE = 'Usage: nines probe <target> [options]\n\nlong help text\n';
const OPTIONS = { rate: { type: 'string' }, command: { type: 'string' }, connections: { type: 'string' }, json: { type: 'boolean' } };

/** @returns {import('../../gateway/base/errors').NinesError} */
function parseError (argv) {
  try {
    parse(argv, OPTIONS, USAGE);
  } catch (err) {
    return err;
  }
  throw new Error(`${argv.join(' ')} parsed`);
}

describe('CLI arguments', () => {
  it('takes a negative number as the option\'s value, for the option\'s own check to refuse', () => {
    assert.equal(parse(['--rate', '-5/s'], OPTIONS, USAGE).values.rate, '-5/s');
    assert.equal(parse(['--connections', '-1', 'x'], OPTIONS, USAGE).values.connections, '-1');
    assert.equal(parse(['--rate', '-.5'], OPTIONS, USAGE).values.rate, '-.5');
    // not after `--`, and not for an option name
    assert.deepEqual(parse(['--', '--rate', '-5'], OPTIONS, USAGE).positionals, ['--rate', '-5']);
    assert.match(parseError(['--rate', '--json']).message, /^nines probe: --rate needs a value \(nines probe --help lists the options\)$/);
  });

  it('names the closest option to a misspelt one', () => {
    const e = parseError(['--comand', '@01']);
    assert.equal(e.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(e.message, 'nines probe: unknown option --comand; did you mean --command? (nines probe --help lists the options)');
    assert.equal(e.details.suggestion, 'command');
    assert.match(parseError(['--conections', '2']).message, /did you mean --connections\?/);
    assert.match(parseError(['--raet', '5']).message, /did you mean --rate\?/, 'two letters swapped');
    assert.doesNotMatch(parseError(['--frobnicate']).message, /did you mean/);
    assert.match(parseError(['--json=1']).message, /--json takes no value/);
    assert.doesNotMatch(parseError(['--frobnicate']).message, /long help text/, 'no usage dump');
  });

  it('suggests only names within a typo or two', () => {
    const known = ['run', 'probe', 'sweep', 'sim', 'plot', 'watch'];
    assert.equal(suggest('prob', known), 'probe');
    assert.equal(suggest('porbe', known), 'probe');
    assert.equal(suggest('sweeep', known), 'sweep');
    assert.equal(suggest('Watch', known), 'watch');
    assert.equal(suggest('frobnicate', known), undefined);
  });

  it('nines probe --rate -5/s says what a rate must be, without "ambiguous" or the usage text', async () => {
    const r = await nines(['probe', 'ascii://127.0.0.1:9', '--command', '@01', '--rate', '-5/s']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^nines: NINES_ERR_INVALID_ARG: --rate must be "max" or a positive rate .*; got "-5\/s"\n$/);
    assert.doesNotMatch(r.stderr, /ambiguous|Usage:/);
    const c = await nines(['probe', 'ascii://127.0.0.1:9', '--command', '@01', '--count', '-5']);
    assert.match(c.stderr, /--count must be a whole number from 1 to \d+; got "-5"/);
  });

  it('answers a misspelt command or option with "did you mean"', async () => {
    const cmd = await nines(['prob']);
    assert.equal(cmd.code, 1);
    assert.match(cmd.stderr, /^nines: unknown command "prob"; did you mean "probe"\?/);
    const opt = await nines(['probe', 'ascii://127.0.0.1:9', '--comand', '@01']);
    assert.equal(opt.code, 1);
    assert.match(opt.stderr, /unknown option --comand; did you mean --command\?/);
    const run = await nines(['run', '--duraton', '1s']);
    assert.match(run.stderr, /nines run: unknown option --duraton; did you mean --duration\?/);
    const none = await nines(['frobnicate']);
    assert.match(none.stderr, /unknown command "frobnicate"\n\n.*Commands:/s, 'no close command: the list');
  });
});
