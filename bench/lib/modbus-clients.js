'use strict';

/**
 * The Node Modbus TCP clients of question 1 (and 5, 8), each opened the way its README shows, reading
 * FC3, 10 holding registers from address 0, unit 1. Each factory resolves to {read, close, version}.
 */

const net = require('node:net');
const path = require('node:path');
const { loadPeer } = require('./peers');

const ROOT = path.join(__dirname, '..', '..');
const TIMEOUT_MS = 1000;

/**
 * The nines driver on this thread.
 * @param {number} port
 * @returns {Promise<{read: () => Promise<any>, close: () => Promise<void>}>}
 */
async function ninesClient (port) {
  const { createClient } = require(path.join(ROOT, 'gateway/drivers'));
  const { validateOp } = require(path.join(ROOT, 'gateway/drivers/modbus'));
  const client = createClient(`modbus+tcp://127.0.0.1:${port}?unitId=1`, { timeoutMs: TIMEOUT_MS });
  client.on('error', () => {});
  await client.connect();
  const op = validateOp({ fc: 3, address: 0, quantity: 10 });
  return { read: () => client.request(op), close: () => client.close() };
}

/**
 * modbus-serial alone (ModbusRTU over TCP).
 * @param {number} port
 */
async function modbusSerialClient (port) {
  const p = loadPeer('modbus-serial');
  if (p.skipped) throw new Error(p.skipped);
  const client = new p.mod();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(1);
  client.setTimeout(TIMEOUT_MS);
  return {
    read: () => client.readHoldingRegisters(0, 10),
    close: () => new Promise((resolve) => client.close(resolve)),
    version: p.version
  };
}

/**
 * jsmodbus's TCP client over a socket we open (TCP_NODELAY on, as nines and libmodbus do).
 * @param {number} port
 */
async function jsmodbusClient (port) {
  const p = loadPeer('jsmodbus');
  if (p.skipped) throw new Error(p.skipped);
  const socket = new net.Socket();
  const client = new p.mod.client.TCP(socket, 1, TIMEOUT_MS);
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.connect({ host: '127.0.0.1', port }, resolve);
  });
  socket.setNoDelay(true);
  return {
    read: () => client.readHoldingRegisters(0, 10),
    close: async () => { socket.destroy(); },
    version: p.version
  };
}

module.exports = { ninesClient, modbusSerialClient, jsmodbusClient, TIMEOUT_MS };
