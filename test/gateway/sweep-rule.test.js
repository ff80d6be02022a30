'use strict';

/**
 * The sweep's saturation rule (gateway/measure/sweep.js saturationIndex), on step results.
 */

const assert = require('node:assert/strict');
const { saturationIndex, utilisation } = require('../../gateway/measure/sweep');

/** A step result; service p50 in ms, on `workers` connections */
const step = (offered, achieved, p99, serviceP50, workers = 1) =>
  ({ offered, achieved, p99, workers, service: serviceP50 === undefined ? undefined : { p50: serviceP50 } });

describe('sweep saturation rule', () => {
  it('applies both rules and ignores noise below the floor', () => {
    assert.equal(saturationIndex([step(100, 100, 1), step(200, 199, 1.1), step(400, 300, 5)]), 2);
    assert.equal(saturationIndex([step(100, 100, 1), step(200, 200, 3)]), 1, 'p99 tripled');
    assert.equal(saturationIndex([step(100, 100, 0.02), step(200, 200, 0.05)]), -1, 'a 30 µs rise is noise');
    assert.equal(saturationIndex([]), -1);
  });

  it('measures utilisation from the step\'s median service time and connections', () => {
    assert.equal(utilisation(step(60, 60, 6, 5)), 0.3);
    assert.equal(utilisation(step(400, 200, 6, 5, 4)), 0.5);
    assert.equal(utilisation(step(60, 60, 6)), null, 'no service time, no utilisation');
  });

  it('does not take a p99 spike at a step that kept a 5 ms device under half busy for saturation', () => {
    // what a loaded CI machine produced: 60/s held, but one late timer made its p99 jump
    const steps = [step(30, 30, 5.2, 5.1), step(60, 60, 48, 5.1), step(400, 199, 460, 5.0), step(800, 200, 620, 5.0)];
    assert.equal(saturationIndex(steps), 2, 'saturated where the 200/s capacity is passed');
  });

  it('still takes a p99 rise for saturation once the device is at least half busy', () => {
    // 5 ms service at 120/s on one connection: 60 % busy, and the tail doubled
    assert.equal(saturationIndex([step(60, 60, 5.3, 5), step(120, 120, 12, 5), step(400, 199, 460, 5)]), 1);
  });

  it('still takes a rate that was not held for saturation, however idle the device looked', () => {
    assert.equal(saturationIndex([step(30, 30, 5.2, 5.1), step(60, 51, 143, 5.1), step(400, 168, 460, 5)]), 1);
  });
});
