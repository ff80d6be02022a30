'use strict';

/**
 * What a model (model.js) and a line of models (line-model.js) share as what a simulator answers
 * from: the unit ids answered, and the check of the unit id in front of `execute`. A subclass
 * implements `execute(buf, start, end, unitId)` and marks its units in `_served`.
 */
class ServedUnits {
  constructor () {
    /** 1 at a unit id answered; a unit set to 0 (serve(id, false)) is silent, as a dead slave */
    this._served = new Uint8Array(256);
  }

  /**
   * Whether a unit id is answered.
   * @param {number} unitId 0-255
   * @returns {boolean}
   */
  serves (unitId) {
    return this._served[unitId] === 1;
  }

  /**
   * Answers one request PDU addressed to `unitId`.
   * @param {number} unitId 0-255
   * @param {Buffer} pdu function code and data
   * @returns {Buffer|null} response PDU (an exception PDU for a bad request), or null when `unitId`
   *   is not answered (no reply, like a missing RS-485 slave) or the PDU is empty
   */
  handle (unitId, pdu) {
    return this.handleAt(unitId, pdu, 0, pdu.length);
  }

  /**
   * {@link ServedUnits#handle} on buf[start, end), so a server can answer a PDU inside a received
   * chunk without slicing it.
   * @param {number} unitId
   * @param {Buffer} buf
   * @param {number} start offset of the function code
   * @param {number} end offset past the last PDU byte
   * @returns {Buffer|null}
   */
  handleAt (unitId, buf, start, end) {
    if (this._served[unitId] !== 1) return null;
    return this.execute(buf, start, end, unitId);
  }
}

module.exports = { ServedUnits };
