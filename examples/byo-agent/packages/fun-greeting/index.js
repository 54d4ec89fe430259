// A package of the project's own, which the platform does not depend on.
export const greet = (name) => `Howdy, ${name}!`;
