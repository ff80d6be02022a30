'use strict';

const assert = require('node:assert/strict');
const { LoginThrottle } = require('../../gateway/runtime/http/login-throttle');

/** A throttle on a clock the test moves */
function throttle (opts = {}) {
  const clock = { t: 1e6 };
  const th = new LoginThrottle({ freeFailures: 3, lockoutMinMs: 1000, lockoutMaxMs: 8000, globalFailures: 10, globalWindowMs: 60000, trackedAddresses: 100, now: () => clock.t, ...opts });
  return { th, clock };
}

describe('gateway/runtime/http/login-throttle', () => {
  it('lets a few failures through, then locks the address out for a delay that doubles up to the max', () => {
    const { th, clock } = throttle();
    const waits = [];
    for (let i = 0; i < 8; i++) {
      clock.t += th.waitMs('a'); // a patient guesser: each try right when allowed
      assert.equal(th.waitMs('a'), 0);
      th.failed('a');
      waits.push(th.waitMs('a'));
    }
    assert.deepEqual(waits, [0, 0, 0, 1000, 2000, 4000, 8000, 8000]);
    assert.equal(th.waitMs('b'), 0, 'another address is not affected');
  });

  it('a right login forgets the address\'s failures', () => {
    const { th, clock } = throttle();
    for (let i = 0; i < 4; i++) th.failed('a');
    clock.t += th.waitMs('a');
    th.succeeded('a');
    th.failed('a');
    assert.equal(th.waitMs('a'), 0);
  });

  it('past the overall bound, only addresses that logged in rightly are served until the window ends', () => {
    const { th, clock } = throttle();
    th.succeeded('browser');
    for (let i = 0; i < 11; i++) th.failed(`10.0.0.${i}`); // one guess each from many addresses
    assert.equal(th.waitMs('browser'), 0);
    assert.deepEqual(th.lockout('10.0.0.200'), { waitMs: 60000, why: '11 wrong logins from all addresses within 60 s, and 10.0.0.200 has not logged in rightly lately' });
    clock.t += 30000;
    assert.equal(th.waitMs('10.0.0.201'), 30000);
    clock.t += 30000;
    assert.equal(th.waitMs('10.0.0.202'), 0);
  });

  it('remembers at most trackedAddresses addresses of each kind, forgetting the oldest', () => {
    const { th } = throttle({ trackedAddresses: 5, globalFailures: 1e9 });
    for (let i = 0; i < 50; i++) { th.failed(`a${i}`); th.succeeded(`k${i}`); }
    assert.equal(th.failing.size, 5);
    assert.equal(th.known.size, 5);
    assert.ok(th.failing.has('a49') && !th.failing.has('a0'));
  });
});
