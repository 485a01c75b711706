// The error catalogues: their data validates against their schemas, every
// AG-UI message is translated, the A2A identities follow spec v1.0.1, and the
// helpers build bodies that satisfy the wire contracts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code } from "@connectrpc/connect";
import { expect } from "chai";
import {
  a2aErrorByJsonRpcCode,
  a2aErrorByReason,
  a2aErrorCatalogue,
  a2aErrorSpec,
  aguiErrorBody,
  aguiErrorCatalogue,
  aguiErrorMessage,
  aguiErrorSpec,
  badRequest,
  errorInfo,
  isAguiErrorCode,
  jsonRpcError,
  parseA2AErrorCatalogue,
  parseAguiErrorCatalogue,
  parseErrorEnvelope,
  parseJsonRpcErrorResponse,
  parseRestError,
  restError,
  UNAUTHORIZED_BODY,
  type AguiErrorCode,
  type AguiMessageKey,
} from "../../src/contract/index.js";
import { LANGUAGES, t } from "../../src/i18n/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function readJson(rel: string): unknown {
  return JSON.parse(readFileSync(path.join(ROOT, rel), "utf8"));
}

function catalog(lang: string): Record<string, string> {
  return readJson(`src/i18n/catalogs/errors/${lang}.json`) as Record<string, string>;
}

describe("error catalogues", () => {
  describe("data files", () => {
    it("schemas/errors/catalogue/agui.json satisfies errors/agui-error-catalogue", () => {
      const result = parseAguiErrorCatalogue(readJson("schemas/errors/catalogue/agui.json"));
      expect(result.ok, JSON.stringify(result)).to.equal(true);
    });

    it("schemas/errors/catalogue/a2a.json satisfies errors/a2a-error-catalogue", () => {
      const result = parseA2AErrorCatalogue(readJson("schemas/errors/catalogue/a2a.json"));
      expect(result.ok, JSON.stringify(result)).to.equal(true);
    });

    it("the generated constants are the data files", () => {
      expect(aguiErrorCatalogue).to.deep.equal(readJson("schemas/errors/catalogue/agui.json"));
      expect(a2aErrorCatalogue).to.deep.equal(readJson("schemas/errors/catalogue/a2a.json"));
    });

    it("rejects a catalogue entry that inlines its message instead of a key", () => {
      const bad = [{ ...aguiErrorCatalogue[0], message: "A valid bearer token is required." }];
      const result = parseAguiErrorCatalogue(bad);
      expect(result.ok).to.equal(false);
      if (!result.ok) expect(result.errors.map((e) => e.path)).to.include("/0/message");
    });
  });

  describe("AG-UI codes", () => {
    const expected: Record<string, { status: number; surfaces: string[] }> = {
      // The AG-UI seed's table.
      INVALID_INPUT: { status: 400, surfaces: ["http", "sse"] },
      DUPLICATE_RUN_ID: { status: 409, surfaces: ["http"] },
      RUN_ID_CONFLICT: { status: 409, surfaces: ["http"] },
      THREAD_BUSY: { status: 409, surfaces: ["http"] },
      THREAD_BINDING_CONFLICT: { status: 409, surfaces: ["http"] },
      RESUME_REQUIRED: { status: 409, surfaces: ["http"] },
      INCOMPLETE_RESUME: { status: 409, surfaces: ["sse"] },
      UNKNOWN_INTERRUPT: { status: 409, surfaces: ["sse"] },
      RESUME_PAYLOAD_INVALID: { status: 400, surfaces: ["sse"] },
      RESUME_ALREADY_APPLIED: { status: 409, surfaces: ["sse"] },
      EXECUTION_EXPIRED: { status: 409, surfaces: ["sse"] },
      EXECUTION_LOST: { status: 409, surfaces: ["http", "sse"] },
      STATE_PERSISTENCE_FAILED: { status: 503, surfaces: ["sse"] },
      A2A_UNAVAILABLE: { status: 503, surfaces: ["sse"] },
      // agui-iaccode.md era C: the A2A server's session backup is still synchronizing (retryable).
      SESSION_BACKUP_NOT_READY: { status: 503, surfaces: ["sse"] },
      A2A_PROTOCOL_ERROR: { status: 502, surfaces: ["sse"] },
      A2A_EXECUTION_FAILED: { status: 502, surfaces: ["sse"] },
      CANCELLED: { status: 409, surfaces: ["sse"] },
      // Model and runtime failures, the same codes as A2A's metadata.iac_code.error.code.
      MODEL_UNREACHABLE: { status: 502, surfaces: ["sse"] },
      MODEL_AUTHENTICATION_FAILED: { status: 502, surfaces: ["sse"] },
      MODEL_RATE_LIMITED: { status: 429, surfaces: ["sse"] },
      MODEL_UNAVAILABLE: { status: 503, surfaces: ["sse"] },
      MODEL_REQUEST_REJECTED: { status: 502, surfaces: ["sse"] },
      MODEL_NOT_FOUND: { status: 502, surfaces: ["sse"] },
      RUNTIME_ERROR: { status: 500, surfaces: ["sse"] },
      // HTTP-level codes.
      UNAUTHORIZED: { status: 401, surfaces: ["http"] },
      UNSUPPORTED_MEDIA_TYPE: { status: 415, surfaces: ["http"] },
      REQUEST_TOO_LARGE: { status: 413, surfaces: ["http"] },
      INVALID_JSON: { status: 400, surfaces: ["http"] },
      EXECUTION_NOT_FOUND: { status: 404, surfaces: ["http"] },
      STATE_UNAVAILABLE: { status: 503, surfaces: ["http"] },
    };

    it("lists exactly the seed's codes plus the model failures and the HTTP-level ones, once each", () => {
      const codes = aguiErrorCatalogue.map((e) => e.code);
      expect(new Set(codes).size).to.equal(codes.length);
      expect([...codes].sort()).to.deep.equal(Object.keys(expected).sort());
    });

    for (const [code, want] of Object.entries(expected)) {
      it(`${code}: HTTP ${want.status}, surfaces ${want.surfaces.join("+")}`, () => {
        const spec = aguiErrorSpec(code as AguiErrorCode);
        expect(spec.httpStatus).to.equal(want.status);
        expect(spec.surfaces).to.deep.equal(want.surfaces);
      });
    }

    it("translates every message key into all seven languages", () => {
      const english = catalog("en");
      const keys = new Set(aguiErrorCatalogue.flatMap((e) => e.messageKeys));
      expect(Object.keys(english).sort(), "errors/en.json holds exactly the catalogue's keys").to.deep.equal(
        [...keys].sort(),
      );
      for (const lang of LANGUAGES) {
        const texts = catalog(lang);
        expect(Object.keys(texts).sort(), lang).to.deep.equal([...keys].sort());
        for (const key of keys) {
          expect(texts[key], `${lang} ${key}`).to.be.a("string").and.not.empty;
          if (lang !== "en") expect(texts[key], `${lang} ${key} is still English`).to.not.equal(english[key]);
          expect(t(lang, key)).to.equal(texts[key]);
        }
      }
    });

    it("keeps the reference's English wording", () => {
      expect(aguiErrorMessage("THREAD_BUSY", "en")).to.equal("The AG-UI thread already has an active run.");
      expect(aguiErrorMessage("UNAUTHORIZED", "en")).to.equal("A valid bearer token is required.");
      expect(aguiErrorMessage("INVALID_INPUT", "en", "agui.error.invalidForwardedProps")).to.equal(
        "Invalid iac-code forwarded properties.",
      );
      expect(aguiErrorMessage("REQUEST_TOO_LARGE", "en", "agui.error.cancelRequestTooLarge")).to.equal(
        "The cancel request body is too large.",
      );
    });
  });

  describe("aguiErrorBody", () => {
    it("answers the cancel extension's not-found exactly as the reference", () => {
      expect(aguiErrorBody("EXECUTION_NOT_FOUND", "en")).to.deep.equal({
        status: 404,
        body: { error: { code: "EXECUTION_NOT_FOUND", message: "The execution was not found." } },
      });
    });

    it("localises the message and keeps the code", () => {
      const { status, body } = aguiErrorBody("THREAD_BUSY", "fr");
      expect(status).to.equal(409);
      expect(body.error.code).to.equal("THREAD_BUSY");
      expect(body.error.message).to.equal("Le thread AG-UI a déjà une exécution en cours.");
      expect(aguiErrorBody("UNAUTHORIZED", "ja").body.error.message).to.equal(
        "有効な Bearer トークンが必要です。",
      );
    });

    it("builds an errors/error-envelope body for every code and message", () => {
      for (const entry of aguiErrorCatalogue) {
        for (const key of entry.messageKeys) {
          for (const lang of LANGUAGES) {
            const { status, body } = aguiErrorBody(entry.code, lang, key);
            expect(status).to.equal(entry.httpStatus);
            const parsed = parseErrorEnvelope(body);
            expect(parsed.ok, `${entry.code} ${key} ${lang}`).to.equal(true);
          }
        }
      }
    });

    it("picks the requested message of a code with several", () => {
      expect(aguiErrorBody("EXECUTION_LOST", "de", "agui.error.resumeMismatch").body.error.message).to.equal(
        "Die Fortsetzungsanfrage passt nicht zur unterbrochenen Ausführung.",
      );
    });

    it("refuses a message key that belongs to another code", () => {
      expect(() => aguiErrorBody("THREAD_BUSY", "en", "agui.error.executionNotFound")).to.throw(
        /does not belong to AG-UI error THREAD_BUSY/,
      );
    });

    it("refuses an unknown code from untyped input", () => {
      expect(isAguiErrorCode("THREAD_BUSY")).to.equal(true);
      expect(isAguiErrorCode("NO_SUCH_CODE")).to.equal(false);
      expect(() => aguiErrorBody("NO_SUCH_CODE" as AguiErrorCode, "en")).to.throw(/Unknown AG-UI error code/);
      expect(() => aguiErrorMessage("THREAD_BUSY", "en", "agui.error.nope" as AguiMessageKey)).to.throw();
    });
  });

  describe("A2A errors", () => {
    // Spec v1.0.1 (DECISIONS.md): JSON-RPC code, HTTP status, gRPC status per error.
    const expected: [string, string, number, number, string][] = [
      ["TaskNotFoundError", "TASK_NOT_FOUND", -32001, 404, "NOT_FOUND"],
      ["TaskNotCancelableError", "TASK_NOT_CANCELABLE", -32002, 400, "FAILED_PRECONDITION"],
      [
        "PushNotificationNotSupportedError",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        -32003,
        400,
        "FAILED_PRECONDITION",
      ],
      ["UnsupportedOperationError", "UNSUPPORTED_OPERATION", -32004, 400, "FAILED_PRECONDITION"],
      ["ContentTypeNotSupportedError", "CONTENT_TYPE_NOT_SUPPORTED", -32005, 400, "INVALID_ARGUMENT"],
      ["InvalidAgentResponseError", "INVALID_AGENT_RESPONSE", -32006, 500, "INTERNAL"],
      [
        "ExtendedAgentCardNotConfiguredError",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        -32007,
        400,
        "FAILED_PRECONDITION",
      ],
      ["ExtensionSupportRequiredError", "EXTENSION_SUPPORT_REQUIRED", -32008, 400, "FAILED_PRECONDITION"],
      ["VersionNotSupportedError", "VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION"],
      ["InvalidParamsError", "INVALID_PARAMS", -32602, 400, "INVALID_ARGUMENT"],
      ["InternalError", "INTERNAL", -32603, 500, "INTERNAL"],
    ];

    for (const [name, reason, code, http, grpc] of expected) {
      it(`${name}: ${reason}, ${code}, HTTP ${http}, ${grpc}`, () => {
        const spec = a2aErrorSpec(name as never);
        expect([spec.reason, spec.jsonrpcCode, spec.httpStatus, spec.grpcStatus]).to.deep.equal([
          reason,
          code,
          http,
          grpc,
        ]);
        expect(a2aErrorSpec(reason as never)).to.equal(spec);
        expect(a2aErrorByReason(reason)).to.equal(spec);
        expect(a2aErrorByJsonRpcCode(code)).to.equal(spec);
      });
    }

    it("covers the standard JSON-RPC errors", () => {
      expect(a2aErrorByJsonRpcCode(-32700)?.message).to.equal("Invalid JSON payload");
      expect(a2aErrorByJsonRpcCode(-32600)?.message).to.equal("Request payload validation error");
      expect(a2aErrorByJsonRpcCode(-32601)?.message).to.equal("Method not found");
      expect(a2aErrorByJsonRpcCode(-32602)?.message).to.equal("Invalid parameters");
      expect(a2aErrorByJsonRpcCode(-32603)?.message).to.equal("Internal error");
      expect(a2aErrorByJsonRpcCode(-32099)).to.equal(undefined);
    });

    it("has unique names, reasons and JSON-RPC codes", () => {
      for (const field of ["name", "reason", "jsonrpcCode"] as const) {
        const values = a2aErrorCatalogue.map((e) => e[field]).filter((v) => v !== null);
        expect(new Set(values).size, field).to.equal(values.length);
      }
    });

    it("numbers every gRPC status as Connect's Code enum does", () => {
      for (const entry of a2aErrorCatalogue) {
        const enumKey = entry.grpcStatus
          .toLowerCase()
          .replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase()) as keyof typeof Code;
        expect(Code[enumKey], entry.name).to.equal(entry.grpcCode);
      }
    });

    it("answers a failed authentication with 401 and the seed's body", () => {
      const spec = a2aErrorSpec("UnauthenticatedError");
      expect([spec.httpStatus, spec.grpcStatus, spec.jsonrpcCode]).to.deep.equal([
        401,
        "UNAUTHENTICATED",
        null,
      ]);
      expect(UNAUTHORIZED_BODY).to.deep.equal({ error: "Unauthorized" });
      expect(a2aErrorCatalogue.find((e) => e.name === "UnauthenticatedError")?.httpBody).to.deep.equal(
        UNAUTHORIZED_BODY,
      );
    });

    it("refuses unknown errors", () => {
      expect(() => a2aErrorSpec("NoSuchError" as never)).to.throw(/Unknown A2A error/);
      expect(a2aErrorByReason("NO_SUCH_REASON")).to.equal(undefined);
    });
  });

  describe("A2A error bodies", () => {
    it("builds google.rpc.ErrorInfo details", () => {
      expect(errorInfo("TASK_NOT_FOUND", { taskId: "t-9" })).to.deep.equal({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "TASK_NOT_FOUND",
        domain: "a2a-protocol.org",
        metadata: { taskId: "t-9" },
      });
      expect(errorInfo("INTERNAL", {})).to.not.have.property("metadata");
    });

    it("builds the spec's JSON-RPC error example", () => {
      const error = jsonRpcError("TaskNotFoundError", {
        message: "Task not found: t-9",
        metadata: { taskId: "t-9" },
      });
      const response = { jsonrpc: "2.0", id: 2, error };
      expect(response).to.deep.equal({
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: -32001,
          message: "Task not found: t-9",
          data: [
            {
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "TASK_NOT_FOUND",
              domain: "a2a-protocol.org",
              metadata: { taskId: "t-9" },
            },
          ],
        },
      });
      expect(parseJsonRpcErrorResponse(response).ok).to.equal(true);
    });

    it("builds every JSON-RPC error as a valid a2a/jsonrpc-error-response", () => {
      for (const entry of a2aErrorCatalogue) {
        if (entry.jsonrpcCode === null) continue;
        const result = parseJsonRpcErrorResponse({
          jsonrpc: "2.0",
          id: null,
          error: jsonRpcError(entry.name),
        });
        expect(result.ok, `${entry.name} ${JSON.stringify(result)}`).to.equal(true);
      }
    });

    it("appends a BadRequest detail for validation failures", () => {
      const error = jsonRpcError("INVALID_PARAMS", {
        message: "Validation failed",
        details: [badRequest([{ field: "message.parts", description: "must not be empty" }])],
      });
      expect(error.data.map((d) => d["@type"])).to.deep.equal([
        "type.googleapis.com/google.rpc.ErrorInfo",
        "type.googleapis.com/google.rpc.BadRequest",
      ]);
      expect(parseJsonRpcErrorResponse({ jsonrpc: "2.0", id: "1", error }).ok).to.equal(true);
    });

    it("refuses a JSON-RPC body for the HTTP-level authentication failure", () => {
      expect(() => jsonRpcError("UnauthenticatedError")).to.throw(/not a JSON-RPC error/);
    });

    it("builds REST errors whose code equals the HTTP status", () => {
      for (const entry of a2aErrorCatalogue) {
        const { status, body } = restError(entry.name, { metadata: { taskId: "t-9" } });
        expect(status).to.equal(entry.httpStatus);
        expect(body.error.code).to.equal(status);
        expect(body.error.status).to.equal(entry.grpcStatus);
        expect(body.error.details[0]).to.deep.include({ reason: entry.reason, domain: "a2a-protocol.org" });
        const parsed = parseRestError(body);
        expect(parsed.ok, `${entry.name} ${JSON.stringify(parsed)}`).to.equal(true);
      }
      expect(restError("TASK_NOT_FOUND", { message: "Task not found: t-9" }).body.error.message).to.equal(
        "Task not found: t-9",
      );
    });
  });
});
