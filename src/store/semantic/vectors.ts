import { invalid } from "../../core/errors.ts";

/**
 * Embedding vectors as stored: 4-byte floats (IEEE 754 single, little-endian, the byte order of every
 * Workers host), `dims * 4` bytes in a SQLite BLOB. Scores are computed in doubles from these floats.
 */

/**
 * A provider's vector as stored floats: it must have `dims` numbers, each finite as a 4-byte float;
 * otherwise an `invalid` error naming the provider and both lengths.
 */
export function checkVector(vector: unknown, dims: number, provider = "the embedding provider"): Float32Array {
  if (!Array.isArray(vector) && !(vector instanceof Float32Array) && !(vector instanceof Float64Array))
    throw invalid(`${provider} returned ${vector === null ? "null" : typeof vector} where a vector was expected`);
  if (vector.length !== dims)
    throw invalid(`${provider} returned a vector of ${vector.length} dimensions; the index has dims ${dims}`);
  const floats = Float32Array.from(vector as ArrayLike<number>);
  for (let i = 0; i < floats.length; i++) {
    if (typeof vector[i] !== "number" || !Number.isFinite(floats[i]))
      throw invalid(`${provider} returned ${String(vector[i])} at position ${i} of a vector: not a finite number`);
  }
  return floats;
}

/** The BLOB of a vector: its floats' bytes (a copy, so the bytes own their buffer). */
export function packVector(vector: Float32Array | readonly number[]): Uint8Array {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  return new Uint8Array(floats.buffer.slice(floats.byteOffset, floats.byteOffset + floats.byteLength));
}
