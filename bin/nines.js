#!/usr/bin/env node
'use strict';

require('../gateway/cli').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code || 0; },
  (err) => {
    process.stderr.write(`nines: ${err && err.code ? err.code + ': ' : ''}${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  }
);
