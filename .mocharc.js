'use strict';

// Shared settings. The default run's file set is in package.json's "test" script
// (test/**/*.test.js minus test/long/), so `npx mocha test/x.test.js` runs just that file.
module.exports = {
  timeout: 20000,
  slow: 2000
};
