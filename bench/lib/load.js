'use strict';

/**
 * Node-RED-like main-thread load for question 5: a busy function that blocks the event loop in
 * `sliceMs` slices, `duty` of the time (20 ms slices, 50 %: block 20 ms, yield 20 ms, repeat).
 */

/**
 * @param {{sliceMs?: number, duty?: number}} [opts]
 * @returns {{stop: () => void, readonly blockedMs: number}}
 */
function startLoad ({ sliceMs = 20, duty = 0.5 } = {}) {
  const idleMs = sliceMs * (1 - duty) / duty;
  let timer = null;
  let blockedMs = 0;
  let stopped = false;
  const slice = () => {
    if (stopped) return;
    const end = performance.now() + sliceMs;
    let x = 0;
    while (performance.now() < end) x++; // the "function node" doing work
    blockedMs += sliceMs;
    timer = setTimeout(slice, idleMs);
    return x;
  };
  timer = setTimeout(slice, idleMs);
  return {
    stop () { stopped = true; clearTimeout(timer); },
    get blockedMs () { return blockedMs; }
  };
}

module.exports = { startLoad };
