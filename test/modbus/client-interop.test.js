'use strict';

// The client against Modbus TCP servers nobody here wrote: modbus-serial's ServerTCP (all eight
// function codes, exceptions) and jsmodbus' TCP server (FC3, FC16).

const assert = require('node:assert/strict');
const { createClient, parseOpString } = require('../../gateway/drivers/modbus');
const { startServerTCP, startJsmodbus, rejectionOf } = require('./helpers');

describe('modbus client vs modbus-serial ServerTCP', () => {
  let srv, client;
  before(async () => {
    srv = await startServerTCP();
    client = createClient(`modbus+tcp://127.0.0.1:${srv.port}?unitId=1`);
    await client.connect();
  });
  after(async () => {
    await client.close();
    await srv.close();
  });

  it('reads coils (FC1)', async () => {
    srv.coils[2] = true;
    srv.coils[9] = true;
    const r = await client.request({ fc: 1, address: 0, quantity: 10 });
    assert.deepEqual(r.data, [false, false, true, false, false, false, false, false, false, true]);
    assert.equal(r.fc, 1);
  });

  it('reads discrete inputs (FC2)', async () => {
    const r = await client.request('2:0:7');
    assert.deepEqual(r.data, [true, false, false, true, false, false, true]);
  });

  it('reads holding registers (FC3) with values, raw register bytes and the whole ADU', async () => {
    const r = await client.request('3:4:3');
    assert.deepEqual(r.data, [12, 15, 18]);
    assert.deepEqual(r.buffer, Buffer.from([0, 12, 0, 15, 0, 18]));
    assert.equal(r.ok, true);
    assert.equal(r.unitId, 1);
    assert.equal(r.address, 4);
    assert.equal(r.raw.length, 7 + 2 + 6);
    assert.equal(typeof r.sentNs, 'bigint');
    assert.ok(r.doneNs >= r.sentNs);
  });

  it('reads input registers (FC4)', async () => {
    const r = await client.readInputRegisters(10, 2);
    assert.deepEqual(r.data, [1010, 1011]);
  });

  it('writes a single coil (FC5) and reads it back', async () => {
    const r = await client.request('5:20=on');
    assert.equal(r.data, true);
    assert.equal(srv.coils[20], true);
    assert.deepEqual((await client.readCoils(20, 1)).data, [true]);
    await client.writeCoil(20, false);
    assert.equal(srv.coils[20], false);
  });

  it('writes a single register (FC6), int16 as two\'s complement', async () => {
    const r = await client.writeRegister(30, -2);
    assert.equal(r.data, 65534);
    assert.equal(srv.regs[30], 65534);
  });

  it('writes multiple coils (FC15)', async () => {
    const r = await client.request({ fc: 15, address: 40, values: [1, 0, 1, 1, 0, 0, 0, 0, 1] });
    assert.equal(r.data, 9);
    assert.deepEqual(srv.coils.slice(40, 49), [true, false, true, true, false, false, false, false, true]);
  });

  it('writes multiple registers (FC16) and reads them back', async () => {
    const r = await client.writeRegisters(50, [1, 2, 65535]);
    assert.equal(r.data, 3);
    assert.deepEqual(srv.regs.slice(50, 53), [1, 2, 65535]);
    assert.deepEqual((await client.readHoldingRegisters(50, 3)).data, [1, 2, 65535]);
  });

  it('serves many concurrent callers one request at a time, in order', async () => {
    const ops = Array.from({ length: 20 }, (_, i) => parseOpString(`3:${i}:1`));
    const replies = await Promise.all(ops.map((op) => client.request(op)));
    assert.deepEqual(replies.map((r) => r.data[0]), ops.map((op) => op.address * 3));
    const s = client.stats;
    assert.equal(s.requests, s.ok + s.errors + s.timeouts + s.queued + s.inFlight);
  });

  it('reports ServerTCP\'s exception for an address it does not have', async () => {
    const err = await rejectionOf(client.request('3:150:100'));
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(err.details.exceptionCode, 2);
    assert.equal(err.details.exceptionName, 'ILLEGAL DATA ADDRESS');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.ok(client.stats.exceptions >= 1);
  });
});

describe('modbus client vs jsmodbus TCP server', () => {
  let srv, client;
  before(async () => {
    srv = await startJsmodbus();
    client = createClient(`modbus+tcp://127.0.0.1:${srv.port}?unitId=1`);
  });
  after(async () => {
    await client.close();
    await srv.close();
  });

  it('reads holding registers (FC3), connecting on the first request', async () => {
    assert.equal(client.state, 'idle');
    const r = await client.request('3:0:5');
    assert.deepEqual(r.data, [100, 101, 102, 103, 104]);
    assert.equal(client.state, 'connected');
  });

  it('writes multiple registers (FC16) that read back', async () => {
    const r = await client.request('16:10=7,8,9');
    assert.equal(r.data, 3);
    assert.equal(srv.holding.readUInt16BE(20), 7);
    assert.deepEqual((await client.request('3:10:3')).data, [7, 8, 9]);
  });

  it('keeps up a closed loop of 500 requests without an error', async () => {
    const op = parseOpString('3:0:10');
    for (let i = 0; i < 500; i++) await client.request(op);
    const s = client.stats;
    assert.equal(s.errors + s.timeouts + s.lateReplies + s.badFrames, 0);
  });
});
