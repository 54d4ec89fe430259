/**
 * Ids the console takes from its own URL (route parameters, `?thread=`) go into API paths, and the
 * SDK's client does not encode them: an id holding `/`, `?`, `#`, `%` or a dot segment could make the
 * signed-in tab call another API path with the user's key. Real ids (UUIDs, graph ids) are letters,
 * digits, `_`, `-`, `.` and `:`, never starting with a dot.
 */
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._:-]{0,199}$/;

export const isSafeId = (value: string): boolean => SAFE_ID.test(value);
