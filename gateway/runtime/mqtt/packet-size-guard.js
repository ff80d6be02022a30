'use strict';

const { Duplex } = require('node:stream');

/**
 * A packet size limit for the embedded broker, enforced on the bytes before aedes parses them.
 * aedes 1.x has no such option (moscajs/aedes#831) and mqtt-packet's parser buffers a packet
 * whole before emitting it, so a client announcing a 200 MB PUBLISH got 200 MB held in the
 * gateway's process. Here the fixed header of every packet is read as it streams past (a type
 * byte and a Remaining Length of 1-4 bytes, MQTT 3.1.1 §2.2.3 and 5.0 §2.1.4), and a connection
 * whose next packet would be larger than the limit is closed at once, before its body arrives.
 */

/**
 * Follows the MQTT packet boundaries of one connection's byte stream. Pure: no socket.
 */
class PacketSizeScanner {
  /** @param {number} maxPacketBytes largest whole packet (fixed header included) let through */
  constructor (maxPacketBytes) {
    this.maxPacketBytes = maxPacketBytes;
    /** body bytes of the current packet still to come */
    this._skip = 0;
    /** -1: next byte is a packet's type byte; 0-3: Remaining Length bytes read so far */
    this._lenBytes = -1;
    this._length = 0;
  }

  /**
   * Reads a chunk of the stream.
   * @param {Buffer} chunk
   * @returns {number|null} the size in bytes of the first packet over the limit (Infinity for a
   *   Remaining Length longer than 4 bytes, which no MQTT packet has), or null when all fit
   */
  feed (chunk) {
    let i = 0;
    while (i < chunk.length) {
      if (this._skip > 0) {
        const n = Math.min(this._skip, chunk.length - i);
        this._skip -= n;
        i += n;
      } else if (this._lenBytes < 0) {
        i++; // the type byte
        this._lenBytes = 0;
        this._length = 0;
      } else {
        const b = chunk[i++];
        this._length += (b & 0x7f) * 128 ** this._lenBytes;
        this._lenBytes++;
        if (b & 0x80) {
          if (this._lenBytes === 4) return Infinity;
          continue;
        }
        const size = 1 + this._lenBytes + this._length;
        if (size > this.maxPacketBytes) return size;
        this._skip = this._length;
        this._lenBytes = -1;
      }
    }
    return null;
  }
}

/**
 * A socket as aedes sees it, with the packet size limit on what it reads. Writes go straight to
 * the socket; remoteAddress is the socket's (broker-guard.js names it in its reports).
 */
class GuardedConnection extends Duplex {
  /**
   * @param {import('node:net').Socket} socket
   * @param {object} opts
   * @param {number} opts.maxPacketBytes
   * @param {(size: number) => void} opts.onTooLarge told once, before the socket is destroyed
   */
  constructor (socket, { maxPacketBytes, onTooLarge }) {
    super({ allowHalfOpen: false });
    this.socket = socket;
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    this._scanner = new PacketSizeScanner(maxPacketBytes);
    socket.on('data', (chunk) => {
      const tooLarge = this._scanner === null ? null : this._scanner.feed(chunk);
      if (tooLarge !== null) {
        onTooLarge(tooLarge);
        this.destroy();
        return;
      }
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  /**
   * Lifts the limit for the rest of the connection: the gateway's own client, once it has logged
   * in with its credential, publishes what the gateway makes (it is not the one to fear).
   */
  liftLimit () {
    this._scanner = null;
  }

  _read () {
    this.socket.resume();
  }

  _write (chunk, encoding, callback) {
    if (this.socket.write(chunk, encoding)) callback();
    else this.socket.once('drain', () => callback());
  }

  // aedes writes a packet in several pieces under cork() (mqtt-packet's writeToStream): they must
  // reach the socket as one write, or Nagle's algorithm holds the later pieces until the client's
  // delayed ACK, about 40 ms (the broker fell from 25,000 to 716 QoS 1 messages/s without this)
  _writev (chunks, callback) {
    this.socket.cork();
    let ok = true;
    for (const { chunk, encoding } of chunks) ok = this.socket.write(chunk, encoding);
    this.socket.uncork();
    if (ok) callback();
    else this.socket.once('drain', () => callback());
  }

  _final (callback) {
    this.socket.end(callback);
  }

  _destroy (err, callback) {
    this.socket.destroy();
    callback(err);
  }
}

module.exports = { PacketSizeScanner, GuardedConnection };
