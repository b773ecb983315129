import type { HrTime } from '@opentelemetry/api';

/*
 * The protobuf writing behind otlp-trace-encoding.ts: varints, fixed-width numbers, strings, ids and nested messages,
 * into one growing buffer.
 */

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** A protobuf writer: varints, fixed ints, strings and nested messages with their lengths. */
export class Writer {
  pos = 0;
  buffer: Buffer;

  constructor(buffer: Buffer) {
    this.buffer = buffer;
  }

  /** What was written, copied out (the buffer is written over by the next request). */
  finish(): Uint8Array {
    return new Uint8Array(this.buffer.subarray(0, this.pos));
  }

  /** Room for `bytes` more (the buffer doubles, keeping what is written). */
  room(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  tag(field: number, wireType: number): void {
    const key = (field << 3) | wireType;
    if (key >= 0x80) this.varint(key);
    else {
      this.room(1);
      this.buffer[this.pos++] = key;
    }
  }

  varint(value: number): void {
    this.room(10);
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        this.buffer[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.buffer[this.pos++] = v;
      return;
    }
    // Beyond 32 bits, and negative numbers as their 64-bit two's complement (ten bytes).
    let low = Math.abs(value) >>> 0;
    let high = (Math.abs(value) / 0x100000000) >>> 0;
    if (value < 0) {
      low = (~low + 1) >>> 0;
      high = (~high + (low === 0 ? 1 : 0)) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      this.buffer[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buffer[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.room(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** An HrTime as fixed64 nanoseconds; seconds split in two so that no product passes 2^53. */
  time(field: number, [seconds, nanos]: HrTime): void {
    this.tag(field, FIXED64);
    this.room(8);
    const low16 = (seconds & 0xffff) * 1e9;
    const high = ((seconds / 0x10000) >>> 0) * 1e9;
    const lowWord = (low16 >>> 0) + (((high & 0xffff) * 0x10000) >>> 0) + nanos;
    const highWord = Math.floor(low16 / 0x100000000) + ((high / 0x10000) >>> 0) + Math.floor(lowWord / 0x100000000);
    this.buffer.writeUInt32LE(lowWord >>> 0, this.pos);
    this.buffer.writeUInt32LE(highWord >>> 0, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.room(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A string as UTF-8 with its length: one native write, its length byte reserved when it surely fits in one. */
  string(value: string): void {
    const units = value.length;
    if (units <= 42) {
      // At most 3 bytes a UTF-16 unit: 42 units are at most 126 bytes, so the length is one byte. ASCII (keys,
      // names, most values) is copied here: for strings this short that is quicker than a call into Buffer's writer.
      this.room(1 + units * 3);
      const { buffer } = this;
      const at = this.pos;
      let i = 0;
      for (; i < units; i++) {
        const code = value.charCodeAt(i);
        if (code > 0x7f) break;
        buffer[at + 1 + i] = code;
      }
      const written = i === units ? units : buffer.write(value, at + 1, 'utf8');
      buffer[at] = written;
      this.pos = at + 1 + written;
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.varint(length);
    this.room(length);
    this.pos += this.buffer.write(value, this.pos, length, 'utf8');
  }

  stringField(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    this.string(value);
  }

  /** A trace or span id (hex) as its bytes, length first. */
  id(field: number, hex: string): void {
    this.tag(field, LENGTH_DELIMITED);
    const length = hex.length >>> 1;
    this.varint(length);
    this.room(length);
    const written = this.buffer.write(hex, this.pos, length, 'hex');
    // The SDK's ids and the propagator's are checked hex; anything else is written digit by digit as the SDK does.
    if (written !== length)
      for (let i = 0; i < length; i++) this.buffer[this.pos + i] = (hexDigit(hex.charCodeAt(2 * i)) << 4) | hexDigit(hex.charCodeAt(2 * i + 1));
    this.pos += length;
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.raw(value);
  }

  raw(value: Uint8Array): void {
    this.room(value.length);
    this.buffer.set(value, this.pos);
    this.pos += value.length;
  }

  /** Starts a nested message (after its tag): one byte kept for its length. */
  begin(): number {
    this.room(1);
    return this.pos++;
  }

  /** Ends the message `begin` started: its length written, its bytes moved on if the length needs more than one byte. */
  end(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.buffer[start] = length;
      return;
    }
    const size = varintSize(length);
    this.room(size - 1);
    this.buffer.copyWithin(start + size, start + 1, this.pos);
    this.pos += size - 1;
    let at = start;
    let v = length;
    while (v > 0x7f) {
      this.buffer[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buffer[at] = v;
  }
}

function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** As the SDK's hexToBinary reads a digit. */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return code - 55;
}
