'use strict';

const assert = require('node:assert/strict');

/**
 * The scheduler's way after a timeout, as the late-reply tests drive it: a read of holding register 0
 * that must time out, and from within its error handler (no turn of the loop in between) a read of
 * register 5. What the second read got tells whether the first one's late reply was taken for it.
 * @param {{submit: Function}} client a Modbus driver client
 * @returns {Promise<number[]|Error>} the second read's registers, or what went wrong
 */
function readAfterTimeout (client) {
  return new Promise((resolve) => {
    client.submit({ fc: 3, address: 0, quantity: 1 }, undefined, {
      onReply: () => resolve(new Error('the first read was answered in time')),
      onError: (err) => {
        assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
        client.submit({ fc: 3, address: 5, quantity: 1 }, 2000, { onReply: (r) => resolve([...r.data]), onError: resolve });
      }
    });
  });
}

module.exports = { readAfterTimeout };
