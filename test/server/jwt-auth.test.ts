/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
// OIDC/JWT sign-in on both servers (issue 33 item 5), through real servers on
// loopback: a local JWKS server serves keys generated here, tokens are signed
// here with jose, and the A2A server (JSON-RPC, REST, gRPC, WebSocket,
// grpc-jsonrpc) and the AG-UI adapter verify them.
import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import * as grpc from "@grpc/grpc-js";
import { exportJWK, generateKeyPair, SignJWT, base64url, type JWK, type JWTPayload } from "jose";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings as resolveA2aSettings } from "../../src/a2a/config/server-settings.js";
import { resolveSettings as resolveAguiSettings } from "../../src/agui/config.js";
import { ConfigError } from "../../src/server/settings.js";
import { createLogger } from "../../src/server/logger.js";
import { cleanup, makeTempDir, rpc, userMessage } from "../a2a/helpers.js";
import { FakeRuntime } from "../a2a/fixtures/fake-runtime.js";
import { a2aGrpcClient, metadata, unary } from "../a2a-bindings/fixtures/grpc-client.js";
import { grpcEnvelopeConnection, request, wsConnection, wsRefusal } from "../transports/raw-clients.js";
import { post, runInput, startHarness, type Harness } from "../agui/harness.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- free-form JSON
type Json = Record<string, any>;

const ISSUER = "https://login.example.test/realms/iac";
const AUDIENCE = "iac-code";

interface Jwks {
  url: string;
  keys: JWK[];
  fetches: number;
  close(): Promise<void>;
}

/** A JWKS endpoint on loopback serving `keys` as they are at each fetch, counting the fetches. */
async function startJwks(): Promise<Jwks> {
  const jwks: Jwks = { url: "", keys: [], fetches: 0, close: () => Promise.resolve() };
  const server = http.createServer((_req, res) => {
    jwks.fetches += 1;
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ keys: jwks.keys }));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  jwks.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  jwks.close = () => new Promise((done) => server.close(() => done()));
  return jwks;
}

interface SigningKey {
  kid: string;
  alg: "RS256" | "ES256";
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  jwk: JWK;
}

async function newKey(alg: "RS256" | "ES256", kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

const now = () => Math.floor(Date.now() / 1000);

/** A token of `key` for `sub` with the right issuer and audience unless `claims` say otherwise. */
async function token(key: SigningKey, sub: string, claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub, iat: now(), exp: now() + 300, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .sign(key.privateKey);
}

const bearer = (jwt: string) => ({ Authorization: `Bearer ${jwt}` });

/** An A2A server with JWT sign-in (and a short key-set cooldown, so a test sees the refresh). */
async function startJwtA2a(
  jwks: Jwks,
  file: Record<string, unknown> = {},
  logged?: string[],
): Promise<{ server: RunningA2aServer; dir: string; close(): Promise<void> }> {
  const dir = makeTempDir("iac-jwt-");
  const settings = resolveA2aSettings(
    {
      port: 0,
      "persistence-dir": path.join(dir, "persist"),
      "auth-jwks-url": jwks.url,
      "auth-issuer": ISSUER,
      "auth-audience": AUDIENCE,
      ...file,
    },
    {},
    {},
  );
  settings.jwt = { ...settings.jwt!, cooldownMs: 300 };
  const server = await startA2aServer(settings, {
    runtime: new FakeRuntime(path.join(dir, "sessions")),
    logger: logged
      ? createLogger({
          format: "json",
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              logged.push(chunk.toString());
              done();
            },
          }),
        })
      : createLogger({ silent: true }),
    cwd: dir,
    env: {},
  });
  return {
    server,
    dir,
    async close() {
      await server.close();
      cleanup(dir);
    },
  };
}

describe("JWT sign-in (OIDC)", function () {
  this.timeout(30_000);
  let jwks: Jwks;
  let rsa: SigningKey;
  let ec: SigningKey;
  before(async () => {
    jwks = await startJwks();
    rsa = await newKey("RS256", "rsa-1");
    ec = await newKey("ES256", "ec-1");
    jwks.keys = [rsa.jwk, ec.jwk];
  });
  after(async () => {
    await jwks.close();
  });

  describe("settings", () => {
    it("reads the three settings from the file and from IACCODE_A2A_AUTH_* / IAC_CODE_AGUI_AUTH_*", () => {
      const a2a = resolveA2aSettings(
        {},
        {},
        {
          IACCODE_A2A_AUTH_JWKS_URL: "https://idp.example.test/jwks",
          IACCODE_A2A_AUTH_ISSUER: ISSUER,
          IACCODE_A2A_AUTH_AUDIENCE: AUDIENCE,
        },
      );
      expect(a2a.jwt).to.deep.equal({
        jwksUrl: "https://idp.example.test/jwks",
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      const agui = resolveAguiSettings(
        {},
        {
          IAC_CODE_AGUI_AUTH_JWKS_URL: "http://127.0.0.1:9/jwks",
          IAC_CODE_AGUI_AUTH_AUDIENCE: AUDIENCE,
        },
      );
      expect(agui.jwt).to.deep.equal({
        jwksUrl: "http://127.0.0.1:9/jwks",
        issuer: undefined,
        audience: AUDIENCE,
      });
    });

    it("refuses an http key set off loopback, a key set without audience, an issuer without key set", () => {
      const refused = (file: Record<string, unknown>) => {
        try {
          resolveA2aSettings(file, {}, {});
        } catch (error) {
          expect(error).to.be.instanceOf(ConfigError);
          return (error as Error).message;
        }
        throw new Error("accepted");
      };
      expect(refused({ "auth-jwks-url": "http://idp.example.test/jwks", "auth-audience": "a" })).to.match(
        /auth-jwks-url must be an https:\/\/ URL \(http:\/\/ only on a loopback host\)/,
      );
      expect(refused({ "auth-jwks-url": "https://idp.example.test/jwks" })).to.match(
        /auth-jwks-url needs auth-audience/,
      );
      expect(refused({ "auth-issuer": ISSUER })).to.match(/auth-issuer needs auth-jwks-url/);
      expect(
        refused({
          transport: "stdio",
          "auth-jwks-url": "https://idp.example.test/jwks",
          "auth-audience": "a",
        }),
      ).to.equal(
        "auth-jwks-url, auth-audience cannot be used with --transport stdio (the parent process owns the pipe); remove them from the config file.",
      );
      expect(() =>
        resolveAguiSettings(
          {},
          { IAC_CODE_AGUI_AUTH_JWKS_URL: "ftp://idp.example.test/jwks", IAC_CODE_AGUI_AUTH_AUDIENCE: "a" },
        ),
      ).to.throw(ConfigError, /IAC_CODE_AGUI_AUTH_JWKS_URL/);
    });
  });

  describe("A2A server", () => {
    let s: Awaited<ReturnType<typeof startJwtA2a>>;
    before(async () => {
      s = await startJwtA2a(jwks);
    });
    after(async () => {
      await s.close();
    });

    it("accepts RS256 and ES256 tokens of the key set, and a token within the 60 s clock skew", async () => {
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(await token(rsa, "alice")))).status).to.equal(
        200,
      );
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(await token(ec, "alice")))).status).to.equal(
        200,
      );
      const justExpired = await token(rsa, "alice", { exp: now() - 20 });
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(justExpired))).status).to.equal(200);
    });

    it("answers 401 with WWW-Authenticate naming why a token is refused", async () => {
      const other = await newKey("RS256", rsa.kid);
      const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${base64url.encode(
        JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: "mallory", exp: now() + 300 }),
      )}.`;
      const hs256 = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: "mallory", exp: now() + 300 })
        .setProtectedHeader({ alg: "HS256", kid: rsa.kid })
        .sign(new TextEncoder().encode("a-shared-secret-of-at-least-32-bytes!"));
      const cases: Array<[string, string]> = [
        [await token(rsa, "alice", { exp: now() - 120 }), "the token has expired"],
        [await token(rsa, "alice", { aud: "someone-else" }), "the token's audience (aud) is not this server"],
        [
          await token(rsa, "alice", { iss: "https://evil.example.test" }),
          "the token's issuer (iss) is not the one this server accepts",
        ],
        [await token(other, "alice"), "the token's signature does not verify"],
        [none, "the token's algorithm is not accepted (RS256 or ES256)"],
        [hs256, "the token's algorithm is not accepted (RS256 or ES256)"],
        [await token(rsa, "alice", { sub: undefined }), `the token's sub claim is missing or not accepted`],
      ];
      for (const [jwt, reason] of cases) {
        const res = await fetch(s.server.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...bearer(jwt) },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
        });
        expect(res.status, reason).to.equal(401);
        expect(await res.json()).to.deep.equal({ error: "Unauthorized" });
        expect(res.headers.get("www-authenticate")).to.equal(
          `Bearer realm="iac-code", error="invalid_token", error_description="${reason}"`,
        );
      }
    });

    it("answers 401 with a bare Bearer challenge without a token, on JSON-RPC and REST", async () => {
      const jsonRpc = await fetch(s.server.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
      });
      expect(jsonRpc.status).to.equal(401);
      expect(jsonRpc.headers.get("www-authenticate")).to.equal('Bearer realm="iac-code"');
      await jsonRpc.arrayBuffer();
      const rest = await fetch(`${s.server.restUrl}/tasks`, { headers: { "A2A-Version": "1.0" } });
      expect(rest.status).to.equal(401);
      expect(rest.headers.get("www-authenticate")).to.equal('Bearer realm="iac-code"');
      await rest.arrayBuffer();
      const expired = await fetch(`${s.server.restUrl}/tasks`, {
        headers: { "A2A-Version": "1.0", ...bearer(await token(ec, "bob", { exp: now() - 600 })) },
      });
      expect(expired.status).to.equal(401);
      expect(expired.headers.get("www-authenticate")).to.include('error="invalid_token"');
      await expired.arrayBuffer();
      const ok = await fetch(`${s.server.restUrl}/tasks`, {
        headers: { "A2A-Version": "1.0", ...bearer(await token(ec, "bob")) },
      });
      expect(ok.status).to.equal(200);
      await ok.arrayBuffer();
    });

    it("scopes tasks to the token's subject: two users see only their own (ListTasks, GetTask)", async () => {
      const alice = bearer(await token(rsa, "alice"));
      const bob = bearer(await token(ec, "bob"));
      const sent = await rpc(s.server.url, "SendMessage", { message: userMessage("mine") }, alice);
      const task = (sent.body.result as Json).task as Json;
      expect(task.id).to.be.a("string");
      const mine = (await rpc(s.server.url, "ListTasks", {}, alice)).body.result as Json;
      expect((mine.tasks as Json[]).map((t) => t.id)).to.include(task.id);
      const theirs = (await rpc(s.server.url, "ListTasks", {}, bob)).body.result as Json;
      expect((theirs.tasks as Json[]).map((t) => t.id)).to.not.include(task.id);
      expect((await rpc(s.server.url, "GetTask", { id: task.id }, bob)).body.error).to.deep.include({
        code: -32001,
      });
      expect((await rpc(s.server.url, "GetTask", { id: task.id }, alice)).body.result).to.have.property(
        "id",
        task.id,
      );
      // The same subject from another issuer is another user (the owner is scoped by issuer).
      const restricted = await startJwtA2a(jwks, { "auth-issuer": undefined });
      try {
        const here = bearer(await token(rsa, "alice"));
        const elsewhere = bearer(await token(rsa, "alice", { iss: "https://other-idp.example.test" }));
        const created = await rpc(restricted.server.url, "SendMessage", { message: userMessage("x") }, here);
        const id = ((created.body.result as Json).task as Json).id as string;
        const other = (await rpc(restricted.server.url, "ListTasks", {}, elsewhere)).body.result as Json;
        expect((other.tasks as Json[]).map((t) => t.id)).to.not.include(id);
      } finally {
        await restricted.close();
      }
    });

    it("the card declares OpenID Connect at the issuer's discovery document", async () => {
      const card = (await (
        await fetch(new URL("/.well-known/agent-card.json", s.server.url))
      ).json()) as Json;
      expect(card.securitySchemes).to.deep.equal({
        oidcAuth: {
          openIdConnectSecurityScheme: {
            openIdConnectUrl: `${ISSUER}/.well-known/openid-configuration`,
            description: `Bearer JWT of this provider, audience ${AUDIENCE}.`,
          },
        },
      });
      expect(card.securityRequirements).to.deep.equal([{ schemes: { oidcAuth: { list: [""] } } }]);
      expect(card.capabilities.extendedAgentCard).to.equal(true);
    });

    it("gRPC: UNAUTHENTICATED with the reason, and the subject's tasks with a valid token", async () => {
      const client = a2aGrpcClient(s.server.grpcTarget);
      const v1 = { "a2a-version": "1.0" };
      const expired = await token(rsa, "alice", { exp: now() - 600 });
      const valid = await token(rsa, "alice");
      try {
        const refused = await unary((cb) =>
          client.ListTasks({}, metadata({ ...v1, authorization: `Bearer ${expired}` }), cb),
        ).then(
          () => undefined,
          (e: grpc.ServiceError) => e,
        );
        expect(refused?.code).to.equal(grpc.status.UNAUTHENTICATED);
        expect(refused?.details).to.equal("Unauthorized (the token has expired)");
        const listed = await unary<Json>((cb) =>
          client.ListTasks({}, metadata({ ...v1, authorization: `Bearer ${valid}` }), cb),
        );
        expect(listed.tasks).to.be.an("array").that.is.not.empty;
      } finally {
        client.close();
      }
    });

    it("refreshes the key set on an unknown kid (once per cooldown), so a rotated key is accepted", async () => {
      const rotated = await newKey("ES256", "ec-2");
      const fresh = await token(rotated, "carol");
      const before = jwks.fetches;
      const unknown = await fetch(s.server.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...bearer(fresh) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
      });
      expect(unknown.status).to.equal(401);
      expect(unknown.headers.get("www-authenticate")).to.include(
        "no key of the identity provider's key set matches the token",
      );
      await unknown.arrayBuffer();
      // Within the cooldown another unknown kid does not fetch again.
      const fetched = jwks.fetches;
      expect(fetched - before).to.be.at.most(1);
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(fresh))).status).to.equal(401);
      expect(jwks.fetches).to.equal(fetched);
      // The provider rotates: the new key is published; after the cooldown it is fetched and accepted.
      jwks.keys = [rsa.jwk, ec.jwk, rotated.jwk];
      await new Promise((done) => setTimeout(done, 350));
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(fresh))).status).to.equal(200);
      expect(jwks.fetches).to.equal(fetched + 1);
      // Known keys come from the cache.
      expect((await rpc(s.server.url, "ListTasks", {}, bearer(await token(rsa, "alice")))).status).to.equal(
        200,
      );
      expect(jwks.fetches).to.equal(fetched + 1);
    });
  });

  it("a key set that cannot be fetched refuses JWTs with the reason; the static token still passes", async () => {
    const gone = await startJwks();
    await gone.close();
    const logged: string[] = [];
    const s = await startJwtA2a(gone, { token: "static" }, logged);
    try {
      const res = await fetch(s.server.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "A2A-Version": "1.0",
          ...bearer(await token(rsa, "alice")),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
      });
      expect(res.status).to.equal(401);
      expect(res.headers.get("www-authenticate")).to.include(
        "the identity provider's key set could not be fetched",
      );
      await res.arrayBuffer();
      expect((await rpc(s.server.url, "ListTasks", {}, bearer("static"))).status).to.equal(200);
      // The operator's log says which URL failed.
      const warning = logged.find((line) => line.includes("could not be fetched"));
      expect(warning).to.be.a("string").and.include(gone.url);
    } finally {
      await s.close();
    }
  });

  describe("A2A custom transports", () => {
    it("websocket: the upgrade is refused (401) without or with a bad token; a token's subject gets in", async () => {
      const s = await startJwtA2a(jwks, { transport: "websocket", "auth-issuer": undefined });
      try {
        expect(await wsRefusal(s.server.url)).to.equal(401);
        expect(await wsRefusal(s.server.url, bearer(await token(rsa, "alice", { aud: "x" })))).to.equal(401);
        const c = await wsConnection(s.server.url, bearer(await token(rsa, "alice")));
        try {
          const reply = await c.next(c.send(request("ListTasks", {})));
          expect(reply.payload.result.tasks).to.be.an("array");
          // Without an issuer the card declares an HTTP bearer JWT scheme.
          const card = await c.next(c.send(request("GetExtendedAgentCard")));
          expect(card.payload.result.securitySchemes).to.deep.equal({
            jwtAuth: {
              httpAuthSecurityScheme: {
                scheme: "bearer",
                bearerFormat: "JWT",
                description: `Bearer JWT signed by a key of ${jwks.url}, audience ${AUDIENCE}.`,
              },
            },
          });
        } finally {
          await c.close();
        }
      } finally {
        await s.close();
      }
    });

    it("grpc-jsonrpc: UNAUTHENTICATED without a valid token, answered with one", async () => {
      const s = await startJwtA2a(jwks, { transport: "grpc-jsonrpc" });
      const target = s.server.url.replace(/^grpc-jsonrpc:\/\//, "");
      const anonymous = grpcEnvelopeConnection(target, {
        authorization: `Bearer ${await token(ec, "alice", { exp: now() - 600 })}`,
      });
      const signedIn = grpcEnvelopeConnection(target, {
        authorization: `Bearer ${await token(ec, "alice")}`,
      });
      try {
        const key = anonymous.send(request("ListTasks", {}));
        for (let i = 0; i < 200 && !anonymous.errors.has(key); i++)
          await new Promise((r) => setTimeout(r, 10));
        expect(anonymous.errors.get(key)?.code).to.equal(grpc.status.UNAUTHENTICATED);
        expect(anonymous.errors.get(key)?.details).to.equal("Unauthorized (the token has expired)");
        const reply = await signedIn.next(signedIn.send(request("ListTasks", {})));
        expect(reply.payload.result.tasks).to.be.an("array");
      } finally {
        await anonymous.close();
        await signedIn.close();
        await s.close();
      }
    });
  });

  describe("AG-UI adapter", () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({
        settings: {
          authToken: "static-token",
          jwt: { jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, cooldownMs: 300 },
        },
      });
    });
    after(async () => {
      await h.close();
    });

    it("runs with a JWT or the static token; refuses none and a bad JWT with WWW-Authenticate", async () => {
      const signedIn = await post(
        h.url,
        runInput(h, { threadId: "jwt-t1", runId: "r1", text: "hello" }),
        bearer(await token(rsa, "alice")),
      );
      expect(signedIn.status).to.equal(200);
      expect(signedIn.events.at(-1)?.type).to.equal("RUN_FINISHED");
      const stat = await post(
        h.url,
        runInput(h, { threadId: "jwt-static", runId: "r1", text: "hello" }),
        bearer("static-token"),
      );
      expect(stat.status).to.equal(200);
      const none = await post(h.url, runInput(h, { threadId: "jwt-t2", runId: "r1", text: "hello" }));
      expect(none.status).to.equal(401);
      expect(none.json?.error.code).to.equal("UNAUTHORIZED");
      expect(none.headers.get("www-authenticate")).to.equal('Bearer realm="iac-code"');
      const expired = await post(
        h.url,
        runInput(h, { threadId: "jwt-t2", runId: "r1", text: "hello" }),
        bearer(await token(rsa, "alice", { exp: now() - 600 })),
      );
      expect(expired.status).to.equal(401);
      expect(expired.headers.get("www-authenticate")).to.equal(
        'Bearer realm="iac-code", error="invalid_token", error_description="the token has expired"',
      );
      const metrics = await fetch(`${h.url}metrics`, { headers: bearer(await token(ec, "alice")) });
      expect(metrics.status).to.equal(200);
      await metrics.arrayBuffer();
      const anonymousMetrics = await fetch(`${h.url}metrics`);
      expect(anonymousMetrics.status).to.equal(401);
      expect(anonymousMetrics.headers.get("www-authenticate")).to.equal('Bearer realm="iac-code"');
      await anonymousMetrics.arrayBuffer();
    });

    it("binds the thread to the token's subject: another user (whatever userId it sends) is refused", async () => {
      const alice = bearer(await token(rsa, "alice"));
      const bob = bearer(await token(ec, "bob"));
      const first = await post(h.url, runInput(h, { threadId: "jwt-bound", runId: "r1", text: "hi" }), alice);
      expect(first.status).to.equal(200);
      expect((await h.store.load("jwt-bound"))?.userId).to.equal(`jwt:${ISSUER}|alice`);
      for (const iac of [{}, { userId: `jwt:${ISSUER}|alice` }]) {
        const other = await post(
          h.url,
          runInput(h, { threadId: "jwt-bound", runId: `r-bob-${Object.keys(iac).length}`, text: "hi", iac }),
          bob,
        );
        expect(other.status).to.equal(409);
        expect(other.json?.error.code).to.equal("THREAD_BINDING_CONFLICT");
      }
      const again = await post(
        h.url,
        runInput(h, { threadId: "jwt-bound", runId: "r2", text: "more" }),
        alice,
      );
      expect(again.status).to.equal(200);
      // The cancel extension: another user's execution is not found; the owner's is answered.
      const doc = await h.store.load("jwt-bound");
      const cancel = (headers: Record<string, string>) =>
        fetch(`${h.url}extensions/iac-code/v1/executions/${doc!.execution.executionId}/cancel`, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify({ threadId: "jwt-bound", rosInvocationId: doc!.execution.rosInvocationId }),
        });
      const foreign = await cancel(bob);
      expect(foreign.status).to.equal(404);
      expect(((await foreign.json()) as Json).error.code).to.equal("EXECUTION_NOT_FOUND");
      const own = await cancel(alice);
      expect(own.status).to.equal(200);
      expect(((await own.json()) as Json).status).to.be.oneOf(["cancelled", "already_terminal"]);
    });

    it("the observer extension takes the thread's user's JWT; another user's is not found, no token 401", async () => {
      const alice = bearer(await token(rsa, "alice"));
      const bob = bearer(await token(ec, "bob"));
      const run = await post(
        h.url,
        runInput(h, { threadId: "jwt-watch", runId: "r1", text: "[[permission]]" }),
        alice,
      );
      expect(run.events.at(-1)?.outcome).to.have.property("type", "interrupt");
      const doc = (await h.store.load("jwt-watch"))!;
      const observe = (headers: Record<string, string>) =>
        fetch(`${h.url}extensions/iac-code/v1/executions/${doc.execution.executionId}/subscribe`, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify({
            threadId: "jwt-watch",
            runId: "r1",
            rosInvocationId: doc.execution.rosInvocationId,
          }),
        });
      const anonymous = await observe({});
      expect(anonymous.status).to.equal(401);
      await anonymous.arrayBuffer();
      const foreign = await observe(bob);
      expect(foreign.status).to.equal(404);
      await foreign.arrayBuffer();
      const own = await observe(alice);
      expect(own.status).to.equal(200);
      const text = await own.text();
      expect(text).to.include('"type":"RUN_FINISHED"').and.include('"type":"interrupt"');
    });
  });
});
