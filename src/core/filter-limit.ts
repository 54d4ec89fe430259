import { FilterTooLargeError } from "../db/json-filter.ts";
import { JsonPathKeyError } from "../db/json-path.ts";
import { invalid } from "./errors.ts";

/** Filters that would exceed D1's bound-parameter limit, or hold keys no JSON path can name, are a client error, not a 500. */
export async function withFilterLimit<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FilterTooLargeError) throw invalid([{ type: "too_long", loc: ["body"], msg: error.message }]);
    if (error instanceof JsonPathKeyError) throw invalid([{ type: "value_error", loc: ["body"], msg: error.message }]);
    throw error;
  }
}
