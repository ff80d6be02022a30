#!/usr/bin/env node
'use strict';

// first, before the modules load (gateway/base/v8-flags.js says why)
require('../gateway/base/v8-flags').setProcessFlags();

// A reader that stops reading (`nines watch | head -1`) closes the pipe: stop as Unix tools do, at
// once and quietly, instead of dying on an unhandled EPIPE with a stack trace (issue 21). The
// commands keep timers and sockets open, so nothing else would end the process.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
}

require('../gateway/cli').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code || 0; },
  (err) => {
    process.stderr.write(`nines: ${err && err.code ? err.code + ': ' : ''}${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  }
);
