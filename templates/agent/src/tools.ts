import { tool } from "@langchain/core/tools";
import { z } from "zod";

/** Arithmetic the model should not do in its head. */
export const calculator = tool(
  ({ operation, a, b }) => {
    switch (operation) {
      case "add":
        return String(a + b);
      case "subtract":
        return String(a - b);
      case "multiply":
        return String(a * b);
      case "divide":
        if (b === 0) throw new Error("Cannot divide by zero");
        return String(a / b);
    }
  },
  {
    name: "calculator",
    description: "Add, subtract, multiply or divide two numbers.",
    schema: z.object({
      operation: z.enum(["add", "subtract", "multiply", "divide"]),
      a: z.number().describe("The first number"),
      b: z.number().describe("The second number"),
    }),
  },
);

/** What the model cannot know: the time now. */
export const currentTime = tool(
  ({ timezone }) =>
    new Date().toLocaleString("en-US", { timeZone: timezone ?? "UTC", dateStyle: "full", timeStyle: "long" }),
  {
    name: "current_time",
    description: "The current date and time, in an IANA time zone such as Europe/Paris (UTC by default).",
    schema: z.object({ timezone: z.string().optional().describe("An IANA time zone name") }),
  },
);

export const TOOLS = [calculator, currentTime];
