'use strict';

// Shared settings. The default run's file set is in package.json's "test" script
// (test/**/*.test.js minus test/long/), so `npx mocha test/x.test.js` runs just that file.
// test/helpers/system-tools.js is a root hook: before the first test it checks the programs the
// run's test files start (socat, mosquitto, mbpoll, chromium…) and fails at once, with the one
// apt-get line, when any is missing.
module.exports = {
  timeout: 20000,
  slow: 2000,
  require: ['test/helpers/system-tools.js']
};
