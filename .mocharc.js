'use strict';

// The default run: unit, contract, interop and integration tests. Long soak and conformance runs
// live in test/long/ and run with `npm run test:long`.
module.exports = {
  spec: ['test/**/*.test.js'],
  ignore: ['test/long/**'],
  timeout: 20000,
  slow: 2000,
  exit: false
};
