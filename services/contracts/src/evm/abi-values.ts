import { invalidRequest } from '@platform/kit/errors';
import { type AbiParameter, getAddress, isAddress, isHex } from 'viem';

/**
 * JSON arguments to the values viem encodes. Integers arrive as JSON numbers (safe integers only), decimal
 * strings or 0x hex (wei amounts do not fit a double); addresses must carry a valid EIP-55 checksum when mixed
 * case; tuples take an array in order or an object by component name. `where` names the argument in errors.
 */
export function toAbiValue(parameter: AbiParameter, value: unknown, where: string): unknown {
  const type = parameter.type;
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw invalidRequest(`${where} must be an array (${type})`);
    if (array[2] !== '' && value.length !== Number(array[2])) throw invalidRequest(`${where} must hold exactly ${array[2]} items (${type})`);
    const item = { ...parameter, type: array[1] as string };
    return value.map((entry, index) => toAbiValue(item, entry, `${where}[${index}]`));
  }
  if (type === 'tuple') {
    const components = 'components' in parameter ? parameter.components : [];
    if (Array.isArray(value)) {
      if (value.length !== components.length) throw invalidRequest(`${where} must hold ${components.length} fields`);
      return components.map((component, index) => toAbiValue(component, value[index], `${where}.${component.name ?? index}`));
    }
    if (typeof value !== 'object' || value === null) throw invalidRequest(`${where} must be an array or an object (tuple)`);
    const fields = value as Record<string, unknown>;
    return Object.fromEntries(
      components.map((component, index) => [
        component.name ?? String(index),
        toAbiValue(component, fields[component.name ?? ''], `${where}.${component.name}`),
      ]),
    );
  }
  if (/^u?int\d*$/.test(type)) return toInteger(value, where, type);
  if (type === 'address') {
    if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw invalidRequest(`${where} must be a 20-byte 0x address`);
    if (value !== value.toLowerCase() && value.slice(2) !== value.slice(2).toUpperCase() && getAddress(value) !== value)
      throw invalidRequest(`${where} has a bad EIP-55 checksum`);
    return getAddress(value);
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw invalidRequest(`${where} must be true or false`);
    return value;
  }
  if (type === 'string') {
    if (typeof value !== 'string') throw invalidRequest(`${where} must be a string`);
    return value;
  }
  if (/^bytes\d*$/.test(type)) {
    if (typeof value !== 'string' || !isHex(value, { strict: true }) || value.length % 2 !== 0) throw invalidRequest(`${where} must be 0x hex bytes (${type})`);
    const size = type === 'bytes' ? undefined : Number(type.slice(5));
    if (size !== undefined && value.length !== 2 + size * 2) throw invalidRequest(`${where} must be exactly ${size} bytes`);
    return value;
  }
  throw invalidRequest(`${where} has ABI type ${type}, which calls here cannot encode`);
}

function toInteger(value: unknown, where: string, type: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?(0|[1-9]\d*)$/.test(value)) return BigInt(value);
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
  throw invalidRequest(`${where} must be an integer (${type}): a safe JSON integer, a decimal string or 0x hex`);
}

/** Arguments for a function, constructor or error from their JSON form, checked against the parameter list. */
export function toAbiArgs(parameters: readonly AbiParameter[], args: readonly unknown[], what: string): unknown[] {
  if (args.length !== parameters.length) throw invalidRequest(`${what} takes ${parameters.length} argument(s), got ${args.length}`, { field: 'args' });
  return parameters.map((parameter, index) => toAbiValue(parameter, args[index], `${what} argument ${index}${parameter.name ? ` (${parameter.name})` : ''}`));
}

/** Decoded values back to JSON: integers as decimal strings (wei does not fit a double), the rest as viem returns them. */
export function toJsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString('hex')}`;
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, toJsonValue(entry)]));
  return value;
}

/** A wei amount from the wire: decimal or 0x hex string. */
export function parseWei(field: string, value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  if (/^(0|[1-9]\d{0,77})$/.test(value)) return BigInt(value);
  if (/^0x[0-9a-fA-F]{1,64}$/.test(value)) return BigInt(value);
  throw invalidRequest(`${field} must be wei as a decimal or 0x hex string`, { field });
}

/** Hex data from the wire (calldata): 0x and an even number of hex digits. */
export function parseHexData(field: string, value: string): `0x${string}` {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(value)) throw invalidRequest(`${field} must be 0x-prefixed hex with an even number of digits`, { field });
  return value as `0x${string}`;
}

export function parseAddress(field: string, value: string): `0x${string}` {
  if (!isAddress(value, { strict: false })) throw invalidRequest(`${field} must be a 20-byte 0x address`, { field });
  if (value !== value.toLowerCase() && value.slice(2) !== value.slice(2).toUpperCase() && getAddress(value) !== value)
    throw invalidRequest(`${field} has a bad EIP-55 checksum`, { field });
  return getAddress(value);
}
