'use strict';

/**
 * What each function code nines speaks is, in one table: the op fields it takes and its limits (op.js),
 * the shape of its request and of its reply (pdu.js), how the length of each is known on a serial line
 * (frame.js, rtu-transport.js), and what the client may do with it (client.js). The modules ask the
 * table, not `fc === N`, so a function code is described once (style.md: protocol tables as data).
 * References: Modbus Application Protocol v1.1b3 §6; Modbus over Serial Line v1.02.
 */

const C = require('../../base/constants');

/**
 * How the length of a normal reply is known: FIXED by the function code (`replyPdu`), COUNTED from the
 * reply's byte count (its PDU byte 1, which must be what the request asked for), or WALKED over its
 * objects (FC43/14: frame.js DeviceIdWalk)
 */
const REPLY = Object.freeze({ FIXED: 'fixed', COUNTED: 'counted', WALKED: 'walked' });

/**
 * @typedef {object} FcTraits
 * @property {number} fc
 * @property {string} kind the op's shape: readBits, readRegs, writeBit, writeReg, writeBits, writeRegs,
 *   diagnostics, maskWrite, readWrite, deviceId
 * @property {ReadonlyArray<string>} takes the op fields it takes besides fc and unitId
 * @property {number} max largest quantity (reads, FC15/16; FC23 the registers read); 1 for one-item writes; 0: none
 * @property {number} maxWrite FC23: largest number of registers written; else 0
 * @property {'bits'|'registers'|null} reads what a normal reply carries after its byte count: packed
 *   bits, big-endian registers (its `buffer`), or nothing read
 * @property {number} requestPdu length of the request PDU when fixed; 0 when a byte count tells it
 * @property {number} requestCountAt offset in the request PDU of its byte count (FC15, 16, 23); 0: fixed length
 * @property {string} replyLength one of REPLY
 * @property {number} replyPdu length of the normal reply PDU when REPLY.FIXED; else 0
 * @property {number} echo bytes of the request PDU the fixed-length reply repeats (see echoLength); 0: none
 * @property {boolean} writes it changes what the device holds (FC8's restart and clear are told by op.js DIAGNOSTICS)
 * @property {boolean} broadcast it may go to unit 0 on RTU: a write that waits for no reply
 * @property {boolean} lackable optional in devices: exception 1 to it says the device lacks the function
 */

const READ = ['address', 'quantity'];
const ONE = ['address', 'quantity', 'value'];
const MANY = ['address', 'quantity', 'value', 'values'];

/** @param {Partial<FcTraits>} t @returns {Readonly<FcTraits>} */
function traits (t) {
  return Object.freeze({
    fc: 0, kind: '', takes: READ, max: 0, maxWrite: 0, reads: null, requestPdu: 0, requestCountAt: 0,
    replyLength: REPLY.FIXED, replyPdu: 0, echo: 0, writes: false, broadcast: false, lackable: false, ...t
  });
}

/** The table, in the order the docs list the function codes */
const LIST = Object.freeze([
  traits({ fc: 1, kind: 'readBits', max: C.MODBUS_MAX_READ_BITS, reads: 'bits', requestPdu: 5, replyLength: REPLY.COUNTED }),
  traits({ fc: 2, kind: 'readBits', max: C.MODBUS_MAX_READ_BITS, reads: 'bits', requestPdu: 5, replyLength: REPLY.COUNTED }),
  traits({ fc: 3, kind: 'readRegs', max: C.MODBUS_MAX_READ_REGISTERS, reads: 'registers', requestPdu: 5, replyLength: REPLY.COUNTED }),
  traits({ fc: 4, kind: 'readRegs', max: C.MODBUS_MAX_READ_REGISTERS, reads: 'registers', requestPdu: 5, replyLength: REPLY.COUNTED }),
  // FC5/6 replies repeat the request: address and value
  traits({ fc: 5, kind: 'writeBit', takes: ONE, max: 1, requestPdu: 5, replyPdu: 5, echo: 5, writes: true, broadcast: true }),
  traits({ fc: 6, kind: 'writeReg', takes: ONE, max: 1, requestPdu: 5, replyPdu: 5, echo: 5, writes: true, broadcast: true }),
  // sub-function and data word; the reply repeats the sub-function, and the data for the echoing sub-functions (echoLength)
  traits({ fc: 8, kind: 'diagnostics', takes: ['subFunction', 'data'], requestPdu: 5, replyPdu: 5, echo: 5, lackable: true }),
  // FC15/16: the request's byte count follows function code, address and quantity (PDU byte 5);
  // the reply repeats function code, address and quantity
  traits({ fc: 15, kind: 'writeBits', takes: MANY, max: C.MODBUS_MAX_WRITE_BITS, requestCountAt: 5, replyPdu: 5, echo: 5, writes: true, broadcast: true }),
  traits({ fc: 16, kind: 'writeRegs', takes: MANY, max: C.MODBUS_MAX_WRITE_REGISTERS, requestCountAt: 5, replyPdu: 5, echo: 5, writes: true, broadcast: true }),
  // the reply repeats the whole request: address, AND mask, OR mask
  traits({ fc: 22, kind: 'maskWrite', takes: ['address', 'quantity', 'andMask', 'orMask'], max: 1, requestPdu: 7, replyPdu: 7, echo: 7, writes: true, broadcast: true, lackable: true }),
  // writes, then reads: its request's byte count follows function code, read address and quantity,
  // write address and quantity (PDU byte 9); its reply is an FC3 reply of the read quantity
  traits({
    fc: 23, kind: 'readWrite', takes: ['address', 'quantity', 'writeAddress', 'values'], max: C.MODBUS_MAX_READ_WRITE_READ_REGISTERS,
    maxWrite: C.MODBUS_MAX_READ_WRITE_WRITE_REGISTERS, reads: 'registers', requestCountAt: 9, replyLength: REPLY.COUNTED, writes: true, lackable: true
  }),
  // MEI type 14, read code, object id; the reply holds as many objects as the device puts in it
  traits({ fc: 43, kind: 'deviceId', takes: ['readCode', 'objectId'], requestPdu: 4, replyLength: REPLY.WALKED, lackable: true })
]);

/** Function code → its traits; null for a code nines does not speak (an array: the lookup runs per reply) */
const FCS = (() => {
  const a = new Array(256).fill(null);
  for (const t of LIST) a[t.fc] = t;
  return Object.freeze(a);
})();

/** The function codes nines speaks, ascending */
const SUPPORTED_FCS = Object.freeze(LIST.map((t) => t.fc).sort((a, b) => a - b));

/**
 * @param {unknown} fc
 * @returns {Readonly<FcTraits>|null} the traits of a function code nines speaks, else null
 */
function traitsOf (fc) {
  return typeof fc === 'number' ? FCS[fc] || null : null;
}

/**
 * Whether an FC8 reply repeats the request's data word: sub-functions 0, 1 and 10 echo it; the
 * counters (11-18) answer with the count in its place.
 * @param {number} subFunction
 * @returns {boolean}
 */
function echoesData (subFunction) {
  return subFunction <= 10;
}

/**
 * How many bytes of its request PDU a fixed-length reply repeats: the table's `echo`, less FC8's
 * data word where the reply carries a count there (echoesData).
 * @param {{fc: number, subFunction?: number}} op a normalized op
 * @returns {number} 0 for a reply that repeats nothing (a read, FC23, FC43)
 */
function echoLength (op) {
  const t = FCS[op.fc];
  return t.kind === 'diagnostics' && !echoesData(/** @type {number} */ (op.subFunction)) ? 3 : t.echo;
}

/**
 * Length in bytes of the normal (non-exception) response PDU to an op.
 * @param {{fc: number, quantity: number}} op a normalized op
 * @returns {number} 0 for FC43, whose length the reply's objects tell (frame.js DeviceIdWalk)
 */
function responsePduLength (op) {
  const t = FCS[op.fc];
  if (t.reads === 'bits') return 2 + ((op.quantity + 7) >> 3);
  if (t.reads === 'registers') return 2 + 2 * op.quantity;
  return t.replyPdu;
}

module.exports = { FCS, LIST, REPLY, SUPPORTED_FCS, traitsOf, echoesData, echoLength, responsePduLength };
