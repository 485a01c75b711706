// ask_user_question: suspends the turn until the user picks an option or
// types an answer. The answer comes back to the model as JSON.
import { ToolError } from "../errors.js";
import { questionRequest, type QuestionOption } from "../permissions/input-requests.js";
import { readOnlyDescription } from "./describe.js";
import type { Tool } from "./types.js";

interface AskInput {
  question: string;
  options: QuestionOption[];
  allow_free_text?: boolean;
  free_text_prompt?: string;
}

export const askUserQuestionTool: Tool<AskInput> = {
  name: "ask_user_question",
  description:
    "Ask the user a question with options (id, label, optional description) when you cannot continue without their choice. The answer is returned as JSON {selected_id, selected_label, free_text}.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["question", "options"],
    properties: {
      question: { type: "string", minLength: 1, maxLength: 2000 },
      options: {
        type: "array",
        minItems: 1,
        maxItems: 50,
        items: {
          type: "object",
          additionalProperties: false,
          required: ["id", "label"],
          properties: {
            id: { type: "string", minLength: 1, maxLength: 200 },
            label: { type: "string", minLength: 1 },
            description: { type: "string" },
          },
        },
      },
      allow_free_text: { type: "boolean", description: "Accept a typed answer (default true)." },
      free_text_prompt: { type: "string" },
    },
  },
  supportsBlanketAllow: true,
  timeoutMs: 0,
  isReadOnly: () => true,
  // Questions are asked one at a time.
  isConcurrencySafe: () => false,
  describe: (_input, lang) => readOnlyDescription("ask_user_question", lang),
  async run(input, ctx) {
    const ids = new Set(input.options.map((o) => o.id));
    if (ids.size !== input.options.length) throw new ToolError("Option ids must be unique.");
    const request = questionRequest({
      toolUseId: ctx.toolUseId,
      question: input.question,
      options: input.options,
      allowFreeText: input.allow_free_text ?? true,
      freeTextPrompt: input.free_text_prompt,
      lang: ctx.language,
    });
    const answer = await ctx.askUser(request);
    if (answer.kind !== "ask_user_question" || answer.cancelled)
      throw new ToolError("The user cancelled the question.");
    const option = input.options.find((o) => o.id === answer.selectedId);
    const result = {
      selected_id: option?.id ?? null,
      selected_label: option?.label ?? null,
      free_text: answer.freeText ?? null,
    };
    return { content: JSON.stringify(result), data: result };
  },
};
