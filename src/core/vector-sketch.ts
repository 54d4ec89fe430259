/**
 * A vector's one-byte sketch: its components rounded to multiples of `scale` (codes of -127…127), a
 * quarter of its bytes, with a proven bound on how far a score from the sketch can be from the exact
 * one. A search scores sketches held in memory, then reads and scores exactly only the vectors whose
 * bound lets them reach the page (workspace/ranked-scan.ts): the same page as scoring every vector.
 */
export interface VectorSketch {
  codes: Int8Array;
  /** What one code step is worth: the largest component's magnitude / 127 (0 for a zero vector). */
  scale: number;
  /** The exact vector's magnitude, as stored with it. */
  magnitude: number;
  /**
   * How far a cosine score from the sketch can be from the exact score, for any query: the rounding
   * error's magnitude over the vector's (|q·e| ≤ |q|·|e|, Cauchy-Schwarz), with margins for the
   * floating-point sums on both sides.
   */
  slack: number;
}

/**
 * How far a score summed in four interleaved parts (`fastDot`) can be from the in-order one, for
 * vectors of `length` whose magnitudes are the ones given: both sums of the same products are within
 * (length-1)·2⁻⁵³·Σ|xᵢqᵢ| of the true sum, and Σ|xᵢqᵢ| ≤ |x|·|q| (Cauchy-Schwarz), so a score moves by
 * under 2·length·2⁻⁵³. Four times that, and a margin for the magnitudes' own rounding, to be sure.
 */
export const scoreSlack = (length: number) => (8 * length + 64) * 2 ** -53;

/**
 * The query magnitudes for which that bound holds: within them no square of a component that counts
 * underflows (nor overflows) in the magnitude's sum. (A vector's components are 4-byte floats, whose
 * squares never do.) Outside them every vector is scored exactly.
 */
const SLACK_MIN_MAGNITUDE = 2 ** -400;
const SLACK_MAX_MAGNITUDE = 2 ** 400;

/** Whether scores against a query of this magnitude may be told apart by an approximate score and its slack. */
export const approximable = (queryMagnitude: number): boolean =>
  queryMagnitude >= SLACK_MIN_MAGNITUDE && queryMagnitude <= SLACK_MAX_MAGNITUDE;

/**
 * The dot product summed in four interleaved parts: about four times faster than one in-order sum
 * (the additions do not wait on each other), and within `scoreSlack` of it; used only for a sketch's
 * score, whose slack covers the difference.
 */
export function fastDot(query: Float64Array, vector: ArrayLike<number>): number {
  const n = vector.length;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    a += vector[i] * query[i];
    b += vector[i + 1] * query[i + 1];
    c += vector[i + 2] * query[i + 2];
    d += vector[i + 3] * query[i + 3];
  }
  for (; i < n; i++) a += vector[i] * query[i];
  return a + b + (c + d);
}

const CODE_MAX = 127;

/** The sketch of `vector`, given its stored `magnitude`. */
export function sketchVector(vector: ArrayLike<number>, magnitude: number): VectorSketch {
  let largest = 0;
  for (let i = 0; i < vector.length; i++) largest = Math.max(largest, Math.abs(vector[i]));
  const scale = largest / CODE_MAX;
  const codes = new Int8Array(vector.length);
  let error = 0;
  if (scale > 0) {
    for (let i = 0; i < vector.length; i++) {
      const code = Math.round(vector[i] / scale);
      codes[i] = code;
      const off = vector[i] - code * scale;
      error += off * off;
    }
  }
  const errorNorm = Math.sqrt(error);
  // The error's magnitude is computed in doubles from 4-byte floats: a relative 2⁻²⁰ covers its rounding
  // many times over; scoreSlack covers the sums of the sketch's score and of the exact one, each scaled
  // by how much the sketch's magnitude may exceed the vector's.
  const relative = magnitude > 0 ? errorNorm / magnitude : 0;
  const slack = magnitude > 0 ? relative * (1 + 2 ** -20) + 2 * scoreSlack(vector.length) * (1 + relative) : 0;
  return { codes, scale, magnitude, slack };
}

/**
 * The cosine score of a sketch against a query (as doubles, with its magnitude): within the
 * sketch's `slack` of the exact score. A zero vector scores 0 exactly, as in the exact score.
 */
export function sketchScore(query: Float64Array, queryMagnitude: number, sketch: VectorSketch): number {
  if (!sketch.magnitude || !queryMagnitude) return 0;
  return (fastDot(query, sketch.codes) * sketch.scale) / (queryMagnitude * sketch.magnitude);
}

/** Bytes a sketch holds in memory: its codes and the object around them, from above. */
export const sketchBytes = (sketch: VectorSketch): number => sketch.codes.length + 160;
