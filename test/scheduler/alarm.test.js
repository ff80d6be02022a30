'use strict';

// The alarm thread (issue 20): a wake-up under a millisecond for a thread that keeps reading its
// sockets. It never fires before its deadline, an earlier deadline replaces a later one, and a
// later one leaves an earlier armed. How late it fires is a bench figure (question 9), not checked here.

const assert = require('node:assert/strict');
const { setAlarm, alarmStats } = require('../../gateway/scheduler/alarm');
const { until } = require('../helpers/wait');

const hr = () => Number(process.hrtime.bigint());

describe('scheduler alarm thread', function () {
  this.timeout(10000);

  it('fires at or after its deadline, once', async () => {
    const fired = [];
    const at = hr() + 3e6;
    assert.equal(setAlarm(at, () => fired.push(hr())), true);
    await until(() => fired.length === 1, 'the alarm', 5000);
    assert.ok(fired[0] >= at, `fired ${(at - fired[0]) / 1e3} µs early`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(fired.length, 1, 'once');
  });

  it('an earlier deadline replaces the armed one; a later one leaves it armed', async () => {
    const fired = [];
    const fire = () => fired.push(hr());
    const late = hr() + 3000e6;
    setAlarm(late, fire);
    const early = hr() + 5e6;
    setAlarm(early, fire);
    const sets = alarmStats.set;
    setAlarm(hr() + 1000e6, fire);
    assert.equal(alarmStats.set, sets, 'a later deadline does not re-arm');
    await until(() => fired.length === 1, 'the earlier alarm', 2900);
    assert.ok(fired[0] >= early && fired[0] < late, 'fired for the earlier deadline');
    // fired: the next one arms again
    const next = hr() + 2e6;
    setAlarm(next, fire);
    await until(() => fired.length === 2, 'the next alarm', 5000);
    assert.ok(fired[1] >= next);
  });
});
