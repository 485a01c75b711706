// The arguments of a streamed tool call, parsed once the call is complete.
// Both wire formats send them as JSON text; a model that sends something
// else gets an inputError it can read instead of a failed turn.

export function parseToolArguments(raw: string): { input: Record<string, unknown>; inputError?: string } {
  if (raw.trim() === "") return { input: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (value && typeof value === "object" && !Array.isArray(value))
      return { input: value as Record<string, unknown> };
    return { input: {}, inputError: "The tool arguments are not a JSON object." };
  } catch {
    return { input: {}, inputError: "The tool arguments are not valid JSON." };
  }
}
