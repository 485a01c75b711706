// The transport settings: flag > config file > IACCODE_A2A_* > default for
// each, the checks on their values, and the start-up refusals (what a
// transport needs, and auth keys a channel guarded by other means would ignore).
import { expect } from "chai";
import { ConfigError, resolveSettings } from "../../src/a2a/config/server-settings.js";
import { checkTransport } from "../../src/a2a/config/transport-settings.js";

describe("transport settings", () => {
  it("defaults", () => {
    expect(resolveSettings({}, {}, {})).to.include({
      socketMode: 0o600,
      wsPath: "/a2a",
      requestStream: "iac-code:a2a:requests",
      responseStream: "iac-code:a2a:responses",
      consumerGroup: "iac-code",
    });
    expect(resolveSettings({}, {}, {})).to.not.have.any.keys("socketPath", "redisUrl");
  });

  it("flag beats file beats environment, for every setting", () => {
    const env = {
      IACCODE_A2A_SOCKET_PATH: "/env.sock",
      IACCODE_A2A_SOCKET_MODE: "0640",
      IACCODE_A2A_WS_PATH: "/env",
      IACCODE_A2A_REDIS_URL: "redis://env:6379",
      IACCODE_A2A_REQUEST_STREAM: "env:req",
      IACCODE_A2A_RESPONSE_STREAM: "env:resp",
      IACCODE_A2A_CONSUMER_GROUP: "env-group",
    };
    expect(resolveSettings({}, {}, env)).to.include({
      socketPath: "/env.sock",
      socketMode: 0o640,
      wsPath: "/env",
      redisUrl: "redis://env:6379",
      requestStream: "env:req",
      responseStream: "env:resp",
      consumerGroup: "env-group",
    });
    const file = {
      "socket-path": "/file.sock",
      "socket-mode": "660",
      "ws-path": "/file",
      "redis-url": "rediss://file:6380",
      "request-stream": "file:req",
      "response-stream": "file:resp",
      "consumer-group": "file-group",
    };
    expect(resolveSettings(file, {}, env)).to.include({
      socketPath: "/file.sock",
      socketMode: 0o660,
      wsPath: "/file",
      redisUrl: "rediss://file:6380",
      consumerGroup: "file-group",
    });
    const flags = {
      "socket-path": "/flag.sock",
      "socket-mode": "0600",
      "ws-path": "/flag",
      "redis-url": "redis://flag:1",
      "request-stream": "flag:req",
      "response-stream": "flag:resp",
      "consumer-group": "flag-group",
    };
    expect(resolveSettings(file, flags, env)).to.include({
      socketPath: "/flag.sock",
      socketMode: 0o600,
      wsPath: "/flag",
      redisUrl: "redis://flag:1",
      requestStream: "flag:req",
      responseStream: "flag:resp",
      consumerGroup: "flag-group",
    });
  });

  it("bad values name where they came from and why", () => {
    const cases: Array<[Parameters<typeof resolveSettings>, string]> = [
      [[{}, { "socket-mode": "0999" }, {}], "Invalid --socket-mode '0999': must match pattern"],
      [[{}, {}, { IACCODE_A2A_WS_PATH: "a2a" }], "Invalid IACCODE_A2A_WS_PATH 'a2a': must match pattern"],
      [
        [{}, { "redis-url": "localhost:6379" }, {}],
        "Invalid --redis-url 'localhost:6379': must match pattern",
      ],
      [
        [{}, { "consumer-group": "" }, {}],
        "Invalid --consumer-group '': must NOT have fewer than 1 characters",
      ],
    ];
    for (const [args, text] of cases) expect(() => resolveSettings(...args)).to.throw(ConfigError, text);
    expect(() => resolveSettings({ "socket-mode": "rw-------" }, {}, {})).to.throw(
      ConfigError,
      /socket-mode/,
    );
  });

  it("refuses at start what a transport lacks or would ignore", () => {
    expect(() => resolveSettings({ transport: "unix" }, {}, {})).to.throw(
      ConfigError,
      "socket-path is required for --transport unix: give --socket-path, socket-path in --config or IACCODE_A2A_SOCKET_PATH.",
    );
    expect(() => resolveSettings({}, { transport: "redis" }, {})).to.throw(
      ConfigError,
      "redis-url is required for --transport redis-streams: give --redis-url, redis-url in --config or IACCODE_A2A_REDIS_URL.",
    );
    expect(() => resolveSettings({ transport: "stdio", "log-to-stdout": true }, {}, {})).to.throw(
      ConfigError,
      "--log-to-stdout cannot be used with --transport stdio because stdout carries A2A frames.",
    );
    expect(() => resolveSettings({ transport: "stdio", token: "t", "api-key": "k" }, {}, {})).to.throw(
      ConfigError,
      "token, api-key cannot be used with --transport stdio (the parent process owns the pipe); remove them from the config file.",
    );
    expect(() =>
      resolveSettings({ transport: "unix", "socket-path": "/s", "basic-username": "u" }, {}, {}),
    ).to.throw(
      ConfigError,
      /^basic-username cannot be used with --transport unix \(socket-mode guards the socket file\)/,
    );
    // A token in the environment (shared with the client) does not stop a stdio server.
    expect(resolveSettings({ transport: "stdio" }, {}, { IACCODE_A2A_HTTP_TOKEN: "t" })).to.include({
      transport: "stdio",
    });
    expect(resolveSettings({ transport: "websocket", token: "t" }, {}, {})).to.include({ token: "t" });
    expect(() =>
      checkTransport(
        "unix",
        { ...resolveSettings({}, {}, {}), socketPath: "/s" },
        { logToStdout: false, authInFile: [], platform: "win32" },
      ),
    ).to.throw("The unix transport is not available on Windows; use --transport http or stdio.");
  });
});
